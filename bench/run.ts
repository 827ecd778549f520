/**
 * `npm run bench`. The service runs in a child process (bench/serve.ts) and autocannon runs
 * here, so load generation and request handling never share an event loop or a heap. The
 * alternative, the service here and autocannon in a worker thread, measured the same within
 * this machine's noise (bare handler 24k-40k req/s and /me by API key 2.1k-3.4k either way);
 * the child process won because per-request hooks such as `setupRequest` can stay closures
 * (workers need them as files), and because it is how the service runs in production.
 */
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createBenchDatabase, DEFAULT_DATABASE_URL } from './database.ts';
import { formatReport, missedTargets, writeIntoReadme, type RunFacts } from './report.ts';
import { runScenarios, TIMING } from './runner.ts';
import { CONNECTIONS, SCENARIOS } from './scenarios.ts';
import { startServiceProcess } from './service-process.ts';

const README = fileURLToPath(new URL('../README.md', import.meta.url));

function runFacts(): RunFacts {
  return {
    date: new Date().toISOString().slice(0, 10),
    node: process.version,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    connections: CONNECTIONS,
    timing: TIMING,
  };
}

async function main(): Promise<void> {
  const database = await createBenchDatabase(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  try {
    const service = await startServiceProcess(database.url);
    try {
      const run = await runScenarios(service);
      const report = formatReport(SCENARIOS, run, runFacts());
      console.log(report);
      writeIntoReadme(README, report);
      const missed = missedTargets(SCENARIOS, run);
      console.log(missed.length ? `\nmissed targets:\n  ${missed.join('\n  ')}` : '\nall targets met');
    } finally {
      await service.stop();
    }
  } finally {
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
