import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import type autocannon from 'autocannon';
import type { Measurement } from './measurement.ts';
import { GROUPED_PATH, UNSTORED_PATH } from './ingest-floor.ts';
import type { BenchContext } from './context.ts';
import type { ServiceProcess } from './service-process.ts';

const stripe = new Stripe('sk_test_bench');

/**
 * A fresh Stripe event per request (distinct ids, so every one is a new inbox row), signed
 * by Stripe's own SDK the way Stripe signs deliveries. Each call names its run at random:
 * two references started in the same millisecond must not send the same ids, since a
 * duplicate is cheaper to answer than a new delivery.
 */
export function signedDeliveries(secret: string): autocannon.Request['setupRequest'] {
  let sequence = 0;
  const runId = randomUUID().slice(0, 13);
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

/** The bench site's payment deliveries still waiting for the worker. */
export function inboxWaiting(service: ServiceProcess): Promise<number> {
  return service.command<number>('inbox-waiting', { siteKey: service.info.site.siteKey });
}

const inboxStored = (service: ServiceProcess) => service.command<number>('inbox-stored', { siteKey: service.info.site.siteKey });

/** The worker applies deliveries in the same process; until it is done it competes for CPU. Fails after `timeoutMs`. */
export async function untilInboxDrained(service: ServiceProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let waiting = await inboxWaiting(service); waiting > 0; waiting = await inboxWaiting(service)) {
    if (Date.now() > deadline) throw new Error(`the worker did not apply the inbox's backlog within ${timeoutMs / 1000} s`);
    // Counting a large backlog is a scan the worker's statements wait behind: look less often then.
    await new Promise((resolve) => setTimeout(resolve, waiting > 1000 ? 1000 : 100));
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

/** The same deliveries to the receiver where it keeps them as our inbox does, with its writer and without a framework. */
export function webhookIngestGrouped(bench: BenchContext): Promise<Measurement> {
  const { ingestFloorUrl, site } = bench.service.info;
  return bench.load({ url: `${ingestFloorUrl}${GROUPED_PATH}`, method: 'POST', setupRequest: signedDeliveries(site.webhookSecret) });
}

/** The same deliveries to the hand-written receiver where it stores nothing: the ceiling of any ingest here. */
export function webhookIngestCeiling(bench: BenchContext): Promise<Measurement> {
  const { ingestFloorUrl, site } = bench.service.info;
  return bench.load({ url: `${ingestFloorUrl}${UNSTORED_PATH}`, method: 'POST', setupRequest: signedDeliveries(site.webhookSecret) });
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
  const before = await inboxStored(bench.service);
  const measured = await bench.load({
    url: `${url}/webhook/payment/${site.siteKey}`,
    method: 'POST',
    setupRequest: signedDeliveries(site.webhookSecret),
  });
  const stored = (await inboxStored(bench.service)) - before;
  if (stored < measured.count) throw new Error(`webhook ingest: ${measured.count} deliveries acknowledged but only ${stored} rows stored`);
  await untilInboxDrained(bench.service);
  return measured;
}

/** Deliveries per round of the effects scenario: a burst as a provider's retry storm might send. */
export const EFFECTS_DELIVERIES = 5000;

/**
 * Webhook effects: a burst of EFFECTS_DELIVERIES signed deliveries, each a new payment of the
 * site (a row, and a `payment.updated` event in the outbox), sent as fast as 50 connections
 * go, then the worker's catching up. The rate is deliveries applied per second from the
 * first one kept to the last one applied; p50 and p99 are each delivery's wait from kept to
 * applied (its 200 to its effect). Every delivery of the burst must have been applied.
 */
export async function webhookEffects(bench: BenchContext): Promise<Measurement> {
  const { url, site } = bench.service.info;
  await untilInboxDrained(bench.service);
  const since = new Date().toISOString();
  await bench.load({
    url: `${url}/webhook/payment/${site.siteKey}`,
    method: 'POST',
    setupRequest: signedDeliveries(site.webhookSecret),
    amount: EFFECTS_DELIVERIES,
  });
  await untilInboxDrained(bench.service);
  const applied = await bench.service.command<{ count: number; spanMs: number; p50: number; p99: number }>('inbox-applied', { siteKey: site.siteKey, since });
  if (applied.count !== EFFECTS_DELIVERIES) throw new Error(`webhook effects: ${applied.count} of ${EFFECTS_DELIVERIES} deliveries applied`);
  return { rate: (applied.count * 1000) / applied.spanMs, p50: applied.p50, p99: applied.p99, count: applied.count };
}
