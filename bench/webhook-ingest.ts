import Stripe from 'stripe';
import type autocannon from 'autocannon';
import type { Measurement } from './measurement.ts';
import type { BenchContext } from './scenarios.ts';
import type { ServiceProcess } from './service-process.ts';

const stripe = new Stripe('sk_test_bench');

/**
 * A fresh Stripe event per request (distinct ids, so every one is a new inbox row), signed
 * by Stripe's own SDK the way Stripe signs deliveries.
 */
export function signedDeliveries(secret: string): autocannon.Request['setupRequest'] {
  let sequence = 0;
  const runId = Date.now().toString(36);
  return (request) => {
    const n = sequence++;
    const created = Math.floor(Date.now() / 1000);
    const payload = JSON.stringify({
      id: `evt_bench_${runId}_${n}`,
      object: 'event',
      type: 'payment_intent.succeeded',
      created,
      data: { object: { id: `pi_bench_${runId}_${n}`, object: 'payment_intent', amount: 1999, currency: 'eur', status: 'succeeded' } },
    });
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: created });
    return { ...request, method: 'POST', body: payload, headers: { 'content-type': 'application/json', 'stripe-signature': signature } };
  };
}

type InboxCount = { stored: number; waiting: number };

/** The bench site's payment deliveries in the inbox: stored in all, and still waiting for the worker. */
export function inboxCount(service: ServiceProcess): Promise<InboxCount> {
  return service.command<InboxCount>('inbox-count', { siteKey: service.info.site.siteKey });
}

/** The worker applies deliveries in the same process; until it is done it competes for CPU. Fails after `timeoutMs`. */
export async function untilInboxDrained(service: ServiceProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await inboxCount(service)).waiting > 0) {
    if (Date.now() > deadline) throw new Error(`the worker did not apply the inbox's backlog within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The same signed deliveries to the hand-written receiver (ingest-floor.ts): every 200 a
 * committed row, as ours, but nothing else.
 */
export function webhookIngestFloor(bench: BenchContext): Promise<Measurement> {
  const { ingestFloorUrl, site } = bench.service.info;
  return bench.load({ url: ingestFloorUrl, method: 'POST', setupRequest: signedDeliveries(site.webhookSecret) });
}

/**
 * Durable ingest: each 200 means the delivery was committed. Afterwards the inbox must
 * hold at least as many new rows as deliveries were acknowledged in the measured run, and
 * the run waits for the worker to apply them all, so the next baseline sample is not
 * slowed by this round's backlog.
 */
export async function webhookIngest(bench: BenchContext): Promise<Measurement> {
  const { url, site } = bench.service.info;
  await untilInboxDrained(bench.service);
  const before = (await inboxCount(bench.service)).stored;
  const measured = await bench.load({
    url: `${url}/webhook/payment/${site.siteKey}`,
    method: 'POST',
    setupRequest: signedDeliveries(site.webhookSecret),
  });
  const stored = (await inboxCount(bench.service)).stored - before;
  if (stored < measured.count) throw new Error(`webhook ingest: ${measured.count} deliveries acknowledged but only ${stored} rows stored`);
  await untilInboxDrained(bench.service);
  return measured;
}
