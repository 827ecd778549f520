/**
 * `npm run soak` (not part of CI): the built service under mixed load for SOAK_MINUTES
 * (default 30): /me by API key, signed payment webhooks and logins at once, each at a sixth
 * of what it reaches alone (half of capacity in all), and an operator's replay every minute.
 * Every minute it prints the service's resident memory (and what of it the heap holds and
 * reserves, and memory outside the heap), each stream's p99 and the errors; at the end it
 * waits for the inbox to drain. It passes when resident memory after the
 * warm-up minute grows less than 10%, no request failed, and nothing is left undelivered.
 */
import autocannon from 'autocannon';
import { withBenchBuild } from './build.ts';
import { withBenchService, type ServiceProcess } from './service-process.ts';
import { failuresOf } from './load.ts';
import { median } from './measurement.ts';
import { inboxWaiting, signedDeliveries, untilInboxDrained } from './webhook-ingest.ts';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const CONNECTIONS = 20;
/** Each stream's share of what it reaches alone: three streams at a sixth make half of capacity. */
const SHARE = 1 / 6;
const DRAIN_TIMEOUT_MS = 300_000;

type Stream = { name: string; options(service: ServiceProcess): autocannon.Options };

const STREAMS: Stream[] = [
  {
    name: '/me',
    options: ({ info }) => ({ url: `${info.url}/api/v1/auth/me`, headers: { authorization: `Bearer ${info.account.apiKey}` } }),
  },
  {
    name: 'webhook',
    options: ({ info }) => ({ url: `${info.url}/webhook/payment/${info.site.siteKey}`, method: 'POST', requests: [{ setupRequest: signedDeliveries(info.site.webhookSecret) }] }),
  },
  {
    name: 'login',
    options: ({ info }) => ({
      url: `${info.url}/api/v1/auth/login`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: info.account.email, password: info.account.password }),
    }),
  },
];

function run(options: autocannon.Options, seconds: number, overallRate?: number): Promise<autocannon.Result> {
  return autocannon({ connections: CONNECTIONS, duration: seconds, ...(overallRate ? { overallRate } : {}), ...options });
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

async function soak(service: ServiceProcess): Promise<boolean> {
  // Capacity: each stream alone, briefly, after the worker has caught up with it.
  const rates = new Map<string, number>();
  for (const stream of STREAMS) {
    const alone = await run(stream.options(service), 5);
    if (failuresOf(alone)) throw new Error(`${stream.name}: ${failuresOf(alone)} requests failed while measuring capacity`);
    rates.set(stream.name, Math.max(1, Math.floor((alone.requests.total / alone.duration) * SHARE)));
    await untilInboxDrained(service, DRAIN_TIMEOUT_MS);
  }
  console.log(`soak: ${MINUTES} min at half of capacity: ${STREAMS.map((s) => `${s.name} ${rates.get(s.name)}/s`).join(', ')}, a replay a minute\n`);
  // Heap used and reserved, and memory outside the heap (Buffers among it): where resident memory goes.
  console.log('| minute | RSS MB | heap MB | heap reserved MB | outside heap MB | /me p99 ms | webhook p99 ms | login p99 ms | requests | errors |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');

  const rss: number[] = [];
  let errors = 0;
  for (let minute = 1; minute <= MINUTES; minute++) {
    const results = await Promise.all([
      ...STREAMS.map((stream) => run(stream.options(service), 60, rates.get(stream.name))),
      service.command<boolean>('replay-newest', { siteKey: service.info.site.siteKey }),
    ]);
    const loads = results.slice(0, STREAMS.length) as autocannon.Result[];
    const memory = await service.command<NodeJS.MemoryUsage>('memory');
    rss.push(memory.rss);
    const minuteErrors = loads.reduce((sum, result) => sum + failuresOf(result), 0);
    errors += minuteErrors;
    const requests = loads.reduce((sum, result) => sum + result.requests.total, 0);
    console.log(`| ${minute} | ${mb(memory.rss)} | ${mb(memory.heapUsed)} | ${mb(memory.heapTotal)} | ${mb(memory.external)} | ${loads.map((result) => result.latency.p99).join(' | ')} | ${requests.toLocaleString('en-US')} | ${minuteErrors} |`);
  }

  const left = await untilInboxDrained(service, DRAIN_TIMEOUT_MS).then(
    () => 0,
    () => inboxWaiting(service),
  );
  const { early, late, growth } = rssGrowth(rss);
  const checks = [
    [`resident memory after warm-up grew ${(growth * 100).toFixed(1)}% (median of the last minutes ${mb(late)} MB against the first ${mb(early)} MB; under 10%)`, growth < 0.1],
    [`${errors} requests failed (none)`, errors === 0],
    [`${left} deliveries left undelivered at the end (none)`, left === 0],
  ] as const;
  console.log('');
  for (const [label, ok] of checks) console.log(`${ok ? 'pass' : 'FAIL'} ${label}`);
  return checks.every(([, ok]) => ok);
}

/**
 * Growth of resident memory after the first minute (JIT, pools and caches warm up in it): the
 * median of the last minutes' readings against the median of the first ones after it, up to
 * five each. One reading at each end would judge the noise: a minute's reading moves by 10%
 * and more with whatever the garbage collector and the allocator happen to hold at that
 * moment, while a leak shows as a level that keeps rising.
 */
function rssGrowth(rss: number[]): { early: number; late: number; growth: number } {
  const settled = rss.slice(1);
  if (settled.length < 2) return { early: rss[0] ?? 0, late: rss.at(-1) ?? 0, growth: rss.length > 1 ? rss[1] / rss[0] - 1 : 0 };
  const window = Math.min(5, Math.floor(settled.length / 2));
  const early = median(settled.slice(0, window));
  const late = median(settled.slice(-window));
  return { early, late, growth: late / early - 1 };
}

async function main(): Promise<void> {
  if (!(await withBenchBuild((buildDir) => withBenchService(buildDir, soak)))) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
