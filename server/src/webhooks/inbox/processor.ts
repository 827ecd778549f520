import type { Deps } from '../../deps.ts';
import { lockNames, namesHeldElsewhere } from '../../lib/advisory-locks.ts';
import type { Tx } from '../../lib/db.ts';
import { lockAccounts } from '../../modules/accounts/index.ts';
import { ignored, type AnyWebhookProvider, type InboxEntry, type Outcome } from '../provider.ts';
import { providerNamed } from '../registry.ts';
import * as inbox from './repo.ts';

/**
 * Applies one inbox entry exactly once: the row lock and the state check make a second
 * job for the same entry (a retry, a sweep, a job that outlived its worker) a no-op, and
 * the effect commits together with the new state or not at all.
 */
export async function processInboxEntry(deps: Deps, inboxId: string): Promise<Outcome | undefined> {
  const [applied] = await processInboxEntries(deps, [inboxId]);
  return applied?.outcome;
}

/**
 * Several entries in one transaction: one commit instead of one per entry, which is most
 * of a small effect's cost, and one statement each to lock the entries and to record their
 * outcomes. A provider with `handleAll` (payments) applies each run of its entries with a
 * few statements for the run instead of a few per entry. All or nothing: if one entry
 * fails, none is applied and the caller falls back to one transaction per entry to find it.
 * Returns the entries applied (those still waiting) with their outcomes.
 */
export async function processInboxEntries(deps: Deps, inboxIds: string[]): Promise<Array<{ id: string; outcome: Outcome }>> {
  const applied = await deps.db.transaction(async (tx) => applyEntries(deps, tx, await inbox.lockReceivedEntries(tx, inboxIds)));
  for (const { id, outcome } of applied) if (outcome.state === 'ignored') logIgnored(deps, id, outcome);
  return applied;
}

/**
 * Those of `ids` still waiting that no other transaction holds, applied in one transaction
 * (a worker's first attempt at them; inbox/dispatcher.ts). `streamOf` names the stream of
 * each id that has one (a channel's messages, applied in the order they arrived): the
 * transaction first tries a lock on each of those streams, and leaves out the ids of a
 * stream that another transaction holds, another worker applying it in its order. Returns
 * the ids it took, the streams it left out (`busy`), and `failed` with the `error` when
 * applying them failed, so none was applied (the caller then tries each on its own). An
 * error before any entry was taken is thrown.
 */
export async function applyWaitingEntries(
  deps: Deps,
  ids: string[],
  streamOf: (id: string) => string | undefined = () => undefined,
): Promise<{ taken: string[]; busy: Set<string>; failed: boolean; error?: unknown }> {
  let taken: string[] = [];
  let busy = new Set<string>();
  try {
    const applied = await deps.db.transaction(async (tx) => {
      busy = await namesHeldElsewhere(tx, ids.flatMap((id) => streamOf(id) ?? []));
      const free = busy.size ? ids.filter((id) => !busy.has(streamOf(id) ?? '')) : ids;
      const entries = await inbox.lockReceivedEntries(tx, free, { skipLocked: true });
      taken = entries.map((entry) => entry.id);
      return applyEntries(deps, tx, entries);
    });
    for (const { id, outcome } of applied) if (outcome.state === 'ignored') logIgnored(deps, id, outcome);
    return { taken, busy, failed: false };
  } catch (error) {
    if (!taken.length) throw error;
    return { taken, busy, failed: true, error };
  }
}

/** The locked entries applied in `tx`, each with its outcome recorded. */
async function applyEntries(deps: Deps, tx: Tx, entries: InboxEntry[]): Promise<Array<{ id: string; outcome: Outcome }>> {
  if (!entries.length) return [];
  // The stored bytes were verified on the way in, so they are only parsed here.
  const items = entries.map((entry) => {
    const provider = providerNamed(entry.provider);
    return { entry, provider, event: provider?.parse(entry.payload) };
  });
  await lockUpFront(deps, tx, items);
  const results: Array<{ id: string; outcome: Outcome }> = [];
  for (const run of runsOfOneProvider(items)) {
    const { provider } = run[0];
    let outcomes: Outcome[];
    if (!provider) outcomes = run.map(({ entry }) => ignored(`unknown provider ${entry.provider}`));
    else if (provider.handleAll) outcomes = await provider.handleAll(deps, tx, run);
    else {
      outcomes = [];
      for (const { entry, event } of run) outcomes.push(await provider.handle(deps, tx, event, entry));
    }
    run.forEach(({ entry }, i) => results.push({ id: entry.id, outcome: outcomes[i] }));
  }
  await inbox.setOutcomes(tx, results, deps.clock.now());
  return results;
}

type Item = { entry: InboxEntry; provider: AnyWebhookProvider | undefined; event: unknown };

/** The items in order, cut wherever the provider changes: each run is applied together, and the order of effects kept. */
function runsOfOneProvider(items: Item[]): Item[][] {
  const runs: Item[][] = [];
  for (const item of items) {
    const last = runs.at(-1);
    if (last && last[0].provider === item.provider) last.push(item);
    else runs.push([item]);
  }
  return runs;
}

/**
 * Two chunks applied at once (the worker's lanes, a replay beside them) would deadlock if
 * each held a lock the other's next entry needs: the same payment in both, or events of the
 * same accounts in another order. So a chunk takes every lock its entries will take before
 * applying any, in the one order that every transaction keeps (EffectLocks): account rows,
 * then named locks, then the event-ordering locks, each sorted. A lone entry too: one
 * entry's own steps need not keep that order (a billing event that moves a subscription
 * locks the account it leaves after the subscription's named lock).
 */
async function lockUpFront(deps: Deps, tx: Tx, items: Item[]): Promise<void> {
  const byProvider = new Map<AnyWebhookProvider, Array<{ entry: InboxEntry; event: unknown }>>();
  for (const { entry, provider, event } of items) {
    if (!provider?.locks) continue;
    const theirs = byProvider.get(provider) ?? [];
    theirs.push({ entry, event });
    byProvider.set(provider, theirs);
  }
  const accounts: number[] = [];
  const names: string[] = [];
  const orderings: string[] = [];
  for (const [provider, theirs] of byProvider) {
    const locks = await provider.locks!(deps, tx, theirs);
    accounts.push(...(locks.accounts ?? []));
    names.push(...(locks.names ?? []));
    orderings.push(...(locks.orderings ?? []));
  }
  await lockAccounts(tx, [...new Set(accounts)]);
  await lockNames(tx, names, orderings);
}

function logIgnored(deps: Deps, inboxId: string, outcome: { reason: string }): void {
  deps.logger.info({ inboxId, reason: outcome.reason }, 'webhook ignored');
}

/**
 * After a chunk of `inboxIds` failed with `chunkError`, and so applied nothing: each entry in a
 * transaction of its own, so that only those that fail wait for a retry. A chunk of one has had
 * its try, and its error is its own. Each failure is counted on its row (outside the rolled-back
 * transaction, with its error), then handed to `onFailure` with the entry's index.
 */
export async function processEachAlone(
  deps: Deps,
  inboxIds: string[],
  chunkError: unknown,
  onFailure: (index: number, error: unknown) => Promise<void>,
): Promise<void> {
  const fail = async (index: number, error: unknown) => {
    await inbox.recordFailure(deps.db, inboxIds[index], error).catch(() => undefined);
    await onFailure(index, error);
  };
  if (inboxIds.length === 1) return fail(0, chunkError);
  for (let index = 0; index < inboxIds.length; index++) {
    try {
      await processInboxEntry(deps, inboxIds[index]);
    } catch (error) {
      await fail(index, error);
    }
  }
}

/** Retries are used up: the entry is kept, visibly dead, for a person to look at. */
export async function markDead(deps: Deps, inboxId: string): Promise<void> {
  const dead = await inbox.markDead(deps.db, inboxId, deps.clock.now());
  if (dead) deps.logger.error({ inboxId, provider: dead.provider, attempts: dead.attempts }, 'webhook dead after retries');
}
