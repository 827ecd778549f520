import { setTimeout as sleep } from 'node:timers/promises';
import { runLoad } from './load.ts';
import type { Measurement } from './measurement.ts';
import type { BenchContext } from './context.ts';
import { CONNECTIONS, referencesOf, SCENARIOS, type Scenario } from './scenarios.ts';
import type { ServiceProcess } from './service-process.ts';
import type { RunResults } from './targets.ts';

/**
 * Five rounds by default: on the shared machines the bench runs on, the bare handler moves by
 * half from one second to the next, and with three rounds a single bad one could carry a row
 * across its target line. `BENCH_ROUNDS` and `BENCH_SECONDS` change them for a quicker look.
 */
export const TIMING = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  seconds: Number(process.env.BENCH_SECONDS ?? 2),
  referenceSeconds: 1,
  warmupSeconds: 1,
};

function benchContext(service: ServiceProcess, durationSeconds: number, warmupSeconds: number): BenchContext {
  return {
    service,
    durationSeconds,
    warmupSeconds,
    load: (options) => runLoad({ connections: CONNECTIONS, durationSeconds, warmupSeconds, ...options }),
  };
}

function scenarioById(id: string): Scenario {
  const found = SCENARIOS.find((scenario) => scenario.id === id);
  if (!found) throw new Error(`no scenario "${id}"`);
  return found;
}

type Round = { measured: Measurement; references: Map<string, Measurement> };

/** The round in the middle by rate, relative to the first reference when there is one. */
function medianRound(scenario: Scenario, rounds: Round[]): Round {
  const [primary] = referencesOf(scenario);
  const score = (round: Round) => round.measured.rate / (primary ? round.references.get(primary)!.rate : 1);
  return [...rounds].sort((a, b) => score(a) - score(b))[Math.floor(rounds.length / 2)];
}

/** Jobs left by the scenarios before (reset mails, webhook effects) would compete for the CPU: a scenario starts once the worker has none. */
async function untilWorkerIdle(service: ServiceProcess, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await service.command<number>('jobs-waiting', {})) > 0) {
    if (Date.now() > deadline) throw new Error(`the worker still had jobs after ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

/**
 * Each measurement starts on a service that has finished what the one before left (logins
 * still queued for argon2 when the load stopped): else a login round's last second would be
 * counted against the next reference or scenario.
 */
async function measure(service: ServiceProcess, scenario: Scenario, bench: BenchContext): Promise<Measurement> {
  await service.command('settle');
  return scenario.run(bench);
}

/** Two samples of one reference as one: the mean of each figure. */
function meanOf(before: Measurement, after: Measurement): Measurement {
  const mean = (a: number, b: number) => (a + b) / 2;
  return { rate: mean(before.rate, after.rate), p50: mean(before.p50, after.p50), p99: mean(before.p99, after.p99), count: before.count + after.count };
}

/**
 * A few short rounds, each measuring the scenario's references (the bare handler, say) just
 * before and just after the scenario itself, so that other load on this shared machine weighs
 * on both alike: a reference counts as the mean of its two samples, which also cancels a
 * machine that speeds up or slows down steadily across the round. The figures are those of the
 * median round, so that a ratio stays within one round.
 */
async function runScenario(service: ServiceProcess, scenario: Scenario): Promise<Round> {
  await untilWorkerIdle(service);
  const first = benchContext(service, TIMING.seconds, TIMING.warmupSeconds);
  const later = benchContext(service, TIMING.seconds, 0);
  const reference = benchContext(service, TIMING.referenceSeconds, 0);
  const sampleReferences = async () => {
    const samples = new Map<string, Measurement>();
    for (const id of referencesOf(scenario)) samples.set(id, await measure(service, scenarioById(id), reference));
    return samples;
  };
  const rounds: Round[] = [];
  for (let round = 0; round < TIMING.rounds; round++) {
    const before = await sampleReferences();
    const measured = await measure(service, scenario, round === 0 ? first : later);
    const after = await sampleReferences();
    rounds.push({ measured, references: new Map([...before].map(([id, sample]) => [id, meanOf(sample, after.get(id)!)])) });
  }
  return medianRound(scenario, rounds);
}

function progressLine(scenario: Scenario, measured: Measurement, references: Map<string, Measurement>): string {
  const refs = [...references].map(([id, sample]) => `${id} ${Math.round(sample.rate)}/s`).join(', ');
  return ` ${Math.round(measured.rate)} ${scenario.unit}, p50 ${Math.round(measured.p50)} ms, p99 ${Math.round(measured.p99)} ms${refs ? ` (alongside: ${refs})` : ''}\n`;
}

/** `BENCH_ONLY=id,id`: those scenarios alone (their references still sampled), for working on one; docs/BENCHMARKS.md is left as it is. */
export const ONLY = process.env.BENCH_ONLY?.split(',').filter(Boolean);

export const selectedScenarios = () => (ONLY ? SCENARIOS.filter((scenario) => ONLY.includes(scenario.id)) : SCENARIOS);

export async function runScenarios(service: ServiceProcess): Promise<RunResults> {
  const run: RunResults = new Map();
  for (const scenario of selectedScenarios()) {
    process.stderr.write(`bench: ${scenario.label} ...`);
    const result = await runScenario(service, scenario);
    run.set(scenario.id, result);
    process.stderr.write(progressLine(scenario, result.measured, result.references));
  }
  return run;
}
