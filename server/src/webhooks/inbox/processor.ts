import type { Deps } from '../../deps.ts';
import type { Tx } from '../../lib/db.ts';
import { ignored, type Outcome } from '../provider.ts';
import { providerNamed } from '../registry.ts';
import * as inbox from './repo.ts';

/**
 * Applies one inbox entry exactly once: the row lock and the state check make a second
 * job for the same entry (a retry, a sweep, a job that outlived its worker) a no-op, and
 * the effect commits together with the new state or not at all.
 */
export async function processInboxEntry(deps: Deps, inboxId: string): Promise<Outcome | undefined> {
  const outcome = await deps.db.transaction((tx) => applyEntry(deps, tx, inboxId));
  if (outcome?.state === 'ignored') logIgnored(deps, inboxId, outcome);
  return outcome;
}

/**
 * Several entries in one transaction: one commit instead of one per entry, which is most
 * of a small effect's cost. All or nothing: if one entry fails, none is applied and the
 * caller falls back to one transaction per entry to find it.
 */
export async function processInboxEntries(deps: Deps, inboxIds: string[]): Promise<void> {
  const outcomes = await deps.db.transaction(async (tx) => {
    const results: Array<Outcome | undefined> = [];
    for (const id of inboxIds) results.push(await applyEntry(deps, tx, id));
    return results;
  });
  outcomes.forEach((outcome, index) => {
    if (outcome?.state === 'ignored') logIgnored(deps, inboxIds[index], outcome);
  });
}

/** The stored bytes were verified on the way in, so they are only parsed here. */
async function applyEntry(deps: Deps, tx: Tx, inboxId: string): Promise<Outcome | undefined> {
  const entry = await inbox.lockReceivedEntry(tx, inboxId);
  if (!entry) return undefined;
  const provider = providerNamed(entry.provider);
  const outcome = provider ? await provider.handle(deps, tx, provider.parse(entry.payload), entry) : ignored(`unknown provider ${entry.provider}`);
  await inbox.setOutcome(tx, entry.id, outcome, deps.clock.now());
  return outcome;
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
