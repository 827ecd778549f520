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
import { buildForBench } from './build.ts';
import { createBenchDatabase, DEFAULT_DATABASE_URL } from './database.ts';
import { formatReport, missedTargets, writeIntoReadme, type RunFacts } from './report.ts';
import { ONLY, runScenarios, selectedScenarios, TIMING } from './runner.ts';
import { closeEventsReceiver } from './events-out.ts';
import { CONNECTIONS } from './scenarios.ts';
import { startServiceProcess } from './service-process.ts';
import { measureStartup } from './startup.ts';

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

/** Start-up is measured on a database of its own: the service it starts sets up its secrets there. */
async function startupDatabase<T>(use: (url: string) => Promise<T>): Promise<T> {
  const database = await createBenchDatabase(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  try {
    return await use(database.url);
  } finally {
    await database.drop();
  }
}

async function main(): Promise<void> {
  const build = buildForBench();
  const database = await createBenchDatabase(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  try {
    const service = await startServiceProcess(database.url, build.dir);
    let report: string;
    let missed: string[];
    try {
      const run = await runScenarios(service);
      report = formatReport(selectedScenarios(), run, runFacts());
      console.log(report);
      missed = missedTargets(selectedScenarios(), run);
    } finally {
      await closeEventsReceiver();
      await service.stop();
    }
    if (ONLY) {
      console.log(missed.length ? `\nmissed targets:\n  ${missed.join('\n  ')}` : '\nall targets met');
      return;
    }
    const startup = await startupDatabase((url) => measureStartup(url, build.dir));
    console.log(`\n${startup.join('\n')}`);
    writeIntoReadme(README, `${report}\n\n${startup.join('\n')}`);
    console.log(missed.length ? `\nmissed targets:\n  ${missed.join('\n  ')}` : '\nall targets met');
  } finally {
    await database.drop();
    build.remove();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
