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
import { withBenchBuild } from './build.ts';
import { withBenchDatabase } from './database.ts';
import { formatReport, missedTargets, writeIntoReadme, type RunFacts } from './report.ts';
import { ONLY, runScenarios, selectedScenarios, TIMING } from './runner.ts';
import { closeEventsReceiver } from './events-out.ts';
import { CONNECTIONS } from './scenarios.ts';
import { withBenchService } from './service-process.ts';
import { measureStartup } from './startup.ts';

/** The page whose Latest results the run rewrites, between its bench markers. */
const RESULTS_PAGE = fileURLToPath(new URL('../docs/BENCHMARKS.md', import.meta.url));

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
  await withBenchBuild(async (buildDir) => {
    const { report, missed } = await withBenchService(buildDir, async (service) => {
      try {
        const run = await runScenarios(service);
        return { report: formatReport(selectedScenarios(), run, runFacts()), missed: missedTargets(selectedScenarios(), run) };
      } finally {
        await closeEventsReceiver();
      }
    });
    console.log(report);
    const verdict = missed.length ? `\nmissed targets:\n  ${missed.join('\n  ')}` : '\nall targets met';
    if (ONLY) return console.log(verdict);
    // On a database of its own: the service it starts sets up its secrets there.
    const startup = await withBenchDatabase((url) => measureStartup(url, buildDir));
    console.log(`\n${startup.join('\n')}`);
    writeIntoReadme(RESULTS_PAGE, `${report}\n\n${startup.join('\n')}`);
    console.log(verdict);
  });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
