import { clearedCookieHeader, cookieHeader } from '../../lib/http-credentials.ts';
import { SESSION_COOKIE, type Context } from '../../trpc/context.ts';
import { DEVICE_TTL_SECONDS } from './sessions.devices.ts';
import type { LoginResult } from './sessions.issue.ts';

/** The session cookie as the API reference shows it: as the gateway sets it over http, with placeholders. */
const SHOWN = { publicUrl: 'http:' };
export const SESSION_COOKIE_SHOWN = `${cookieHeader(SHOWN, SESSION_COOKIE, '<jwt>')}; Max-Age=<JWT_TTL s>`;
export const CLEARED_SESSION_COOKIE_SHOWN = clearedCookieHeader(SHOWN, SESSION_COOKIE);

/**
 * A complete sign-in: the login answer, and the session (with a device token for a client new
 * to the account) handed to the transport, which keeps them as the client's cookies.
 */
export function signedIn(ctx: Context, { token, user, deviceToken }: LoginResult) {
  const device = deviceToken ? { token: deviceToken, maxAgeSeconds: DEVICE_TTL_SECONDS } : undefined;
  ctx.response.signedIn = { token, maxAgeSeconds: ctx.deps.config.jwtTtlSeconds, device };
  return { success: true as const, token, user };
}

/** A logout: the transport forgets the session (clears its cookie). */
export function signedOut(ctx: Context) {
  ctx.response.signedOut = true;
  return { success: true as const };
}
