import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Measurement } from './measurement.ts';
import { SERVICE_LOG_LEVEL } from './protocol.ts';
import { referencesOf, type Scenario } from './scenarios.ts';
import { BASELINE, resultsFor, type Results, type RunResults } from './targets.ts';

export const START_MARKER = '<!-- bench:start -->';
export const END_MARKER = '<!-- bench:end -->';

export type RunFacts = {
  date: string;
  node: string;
  cpus: number;
  cpuModel: string;
  connections: number;
  timing: { rounds: number; seconds: number; referenceSeconds: number };
};

const rounded = (value: number) => Math.round(value).toLocaleString('en-US');
/** Rounded down, so that 19.97% never reads as a passing 20.0%. */
const percent = (fraction: number) => `${(Math.floor(fraction * 1000) / 10).toFixed(1)}%`;

function ratioCell(scenario: Scenario, own: Measurement, results: Results): string {
  if (scenario.id === BASELINE) return 'baseline';
  // A rate per CPU-second (the fast-path rows) compares with its own kind only, not with the bare handler's rate per second.
  const baseline = scenario.unit.endsWith('/CPU-s') ? [] : [BASELINE];
  return [...new Set([...baseline, ...referencesOf(scenario)])]
    .map((id) => {
      const other = results.get(id);
      return other ? `${percent(own.rate / other.rate)} of ${id} (${rounded(other.rate)})` : `? of ${id}`;
    })
    .join('<br>');
}

function targetCell(scenario: Scenario, own: Measurement, results: Results): string {
  return (scenario.targets ?? []).map((target) => `${target.met(own, results) ? 'pass' : '**FAIL**'} ${target.label}`).join('<br>');
}

function row(scenario: Scenario, run: RunResults): string[] {
  const results = resultsFor(run, scenario.id);
  const own = run.get(scenario.id)?.measured;
  if (!own) return [];
  const rate = `${rounded(own.rate)} ${scenario.unit}`;
  return [`| ${scenario.label} | ${rate} | ${own.p50.toFixed(0)} | ${own.p99.toFixed(0)} | ${ratioCell(scenario, own, results)} | ${targetCell(scenario, own, results)} |`];
}

export function missedTargets(scenarios: Scenario[], run: RunResults): string[] {
  return scenarios.flatMap((scenario) => {
    const own = run.get(scenario.id)?.measured;
    const results = resultsFor(run, scenario.id);
    return own ? (scenario.targets ?? []).filter((target) => !target.met(own, results)).map((target) => `${scenario.id}: ${target.label}`) : [];
  });
}

export function formatReport(scenarios: Scenario[], run: RunResults, facts: RunFacts): string {
  const { rounds, seconds, referenceSeconds } = facts.timing;
  const bare = [...run.values()].flatMap((result) => result.references.get(BASELINE)?.rate ?? []);
  const range = bare.length ? ` (bare handler: ${rounded(Math.min(...bare))} to ${rounded(Math.max(...bare))} req/s)` : '';
  return [
    `\`npm run bench\` on ${facts.date}: Node ${facts.node}, ${facts.cpus} CPUs (${facts.cpuModel}), PostgreSQL at DATABASE_URL, ${facts.connections} connections; the service at LOG_LEVEL=${SERVICE_LOG_LEVEL}.`,
    `Each scenario runs ${rounds} rounds of ${seconds} s, each between two ${referenceSeconds} s samples of what its targets compare it with`,
    `(the bare handler; for login the hash ceiling; for /me under logins /me alone; for token minting /me by the same credential), read as their mean, so that other load on the`,
    `machine weighs on both alike${range}. Each row shows its median round.`,
    '',
    '| scenario | rate | p50 ms | p99 ms | ratio | targets |',
    '|---|---:|---:|---:|---|---|',
    ...scenarios.flatMap((scenario) => row(scenario, run)),
  ].join('\n');
}

/** Replaces only what lies between the markers; adds the markers at the end if absent. */
export function writeIntoReadme(path: string, report: string): void {
  const block = `${START_MARKER}\n${report}\n${END_MARKER}`;
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER, start);
  if ((start >= 0) !== (end >= 0)) throw new Error(`${path} has one bench marker without the other`);
  if (start >= 0) {
    writeFileSync(path, text.slice(0, start) + block + text.slice(end + END_MARKER.length));
  } else {
    writeFileSync(path, `${text}${text && !text.endsWith('\n') ? '\n' : ''}${text ? '\n' : ''}${block}\n`);
  }
}
