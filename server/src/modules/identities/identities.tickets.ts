import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import type { SealedPlace } from '../../lib/crypto.ts';
import type { Queryable } from '../../lib/db.ts';
import { insertLinkTicket, useLinkTicket } from './identities.repo.ts';

/**
 * A ticket to connect a provider (docs/API.md, Identity providers): what POST
 * /identities/{name}/link hands out once the password and step-up are given, and the only
 * thing a start with `intent=link` accepts. The ticket is the sealed id of a row naming the
 * account, the session that asked and the provider; a start deletes the row, so the ticket
 * serves once, and only within its 5 minutes.
 */
export const LINK_TICKET_TTL_MS = 5 * 60_000;

/** Who may finish the link: the account, and the session whose cookie must come back with the provider's answer. */
export type LinkTicket = { accountId: number; sessionId: string };

const placeOf = (provider: string): SealedPlace => ({ column: 'link_ticket', row: provider });

/** A new ticket, kept in `db` (the caller's transaction, beside its activity line). */
export async function issueLinkTicket(db: Queryable, deps: Pick<Deps, 'clock' | 'secretBox'>, ticket: LinkTicket, provider: string): Promise<string> {
  const id = randomUUID();
  const expiresAt = new Date(deps.clock.now().getTime() + LINK_TICKET_TTL_MS);
  await insertLinkTicket(db, { id, account_id: ticket.accountId, session_id: ticket.sessionId, provider, expires_at: expiresAt });
  return deps.secretBox.seal(id, placeOf(provider));
}

/** The ticket's account and session, using it up; undefined for one not sealed here for this provider, used, or expired. */
export async function useTicket(deps: Pick<Deps, 'db' | 'clock' | 'secretBox'>, sealed: string | undefined, provider: string): Promise<LinkTicket | undefined> {
  if (!sealed || sealed.length > 512) return undefined;
  let id: string;
  try {
    id = deps.secretBox.open(sealed, placeOf(provider));
  } catch {
    return undefined;
  }
  const row = await useLinkTicket(deps.db, deps.clock, id, provider);
  return row && { accountId: row.account_id, sessionId: row.session_id };
}
