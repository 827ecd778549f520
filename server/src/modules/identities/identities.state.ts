import type { SecretBox, SealedPlace } from '../../lib/crypto.ts';

/**
 * The sign-in under way between the start and the callback, carried by the browser in the
 * sealed `svc_oauth` cookie rather than in a server table that anyone could fill: the
 * provider, the state and nonce it must send back, the PKCE verifier, where to go after,
 * and for a link, the account and session that asked. Sealed (AES-GCM under DATA_KEY), so it is
 * neither read nor altered on the way; 10 minutes.
 */
export type PendingSignIn = {
  provider: string;
  state: string;
  nonce: string;
  verifier: string;
  next: string | undefined;
  intent: 'login' | 'link';
  /** For `intent=link`: the account its ticket named, and the session whose cookie must finish it. */
  accountId?: number;
  sessionId?: string;
  /** When the start was made (ms since the epoch, by deps.clock). */
  startedAt: number;
};

export const PENDING_TTL_MS = 10 * 60_000;
const PLACE: SealedPlace = { column: 'cookie.svc_oauth', row: 'pending-sign-in' };

export function sealPending(box: SecretBox, pending: PendingSignIn): string {
  return box.seal(JSON.stringify(pending), PLACE);
}

/** The pending sign-in a cookie carries, or undefined for a missing, tampered, foreign or expired one. */
export function openPending(box: SecretBox, sealed: string | undefined, now: Date): PendingSignIn | undefined {
  if (!sealed || sealed.length > 4096) return undefined;
  let pending: PendingSignIn;
  try {
    pending = JSON.parse(box.open(sealed, PLACE)) as PendingSignIn;
  } catch {
    return undefined;
  }
  const age = now.getTime() - pending.startedAt;
  return age >= 0 && age <= PENDING_TTL_MS ? pending : undefined;
}
