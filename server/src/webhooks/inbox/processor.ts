import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { ignored, type InboxEntry, type Outcome } from '../provider.ts';
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
 * outcomes. All or nothing: if one entry fails, none is applied and the caller falls back
 * to one transaction per entry to find it. Returns the entries applied (those still
 * waiting) with their outcomes.
 */
export async function processInboxEntries(deps: Deps, inboxIds: string[]): Promise<Array<{ id: string; outcome: Outcome }>> {
  const applied = await deps.db.transaction(async (tx) => {
    const results: Array<{ id: string; outcome: Outcome }> = [];
    for (const entry of await inbox.lockReceivedEntries(tx, inboxIds)) results.push({ id: entry.id, outcome: await applyEntry(deps, tx, entry) });
    await inbox.setOutcomes(tx, results, deps.clock.now());
    return results;
  });
  for (const { id, outcome } of applied) if (outcome.state === 'ignored') logIgnored(deps, id, outcome);
  return applied;
}

/** The stored bytes were verified on the way in, so they are only parsed here. */
function applyEntry(deps: Deps, tx: Tx, entry: InboxEntry): Promise<Outcome> {
  const provider = providerNamed(entry.provider);
  return provider ? provider.handle(deps, tx, provider.parse(entry.payload), entry) : Promise.resolve(ignored(`unknown provider ${entry.provider}`));
}

function logIgnored(deps: Deps, inboxId: string, outcome: { reason: string }): void {
  deps.logger.info({ inboxId, reason: outcome.reason }, 'webhook ignored');
}

/** A failed attempt, counted outside its rolled-back transaction with the error it ended in. */
export async function recordFailure(deps: Deps, inboxId: string, error: unknown): Promise<void> {
  await inbox.recordFailure(deps.db, inboxId, error);
}

/** Retries are used up: the entry is kept, visibly dead, for a person to look at. */
export async function markDead(deps: Deps, inboxId: string): Promise<void> {
  const dead = await inbox.markDead(deps.db, inboxId, deps.clock.now());
  if (dead) deps.logger.error({ inboxId, provider: dead.provider, attempts: dead.attempts }, 'webhook dead after retries');
}
