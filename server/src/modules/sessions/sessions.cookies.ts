import { clearedCookieHeader, cookieHeader } from '../../lib/http-credentials.ts';
import { deviceCookieName, SESSION_COOKIE, type Context } from '../../trpc/context.ts';
import { DEVICE_TTL_SECONDS } from './sessions.devices.ts';
import type { LoginResult } from './sessions.issue.ts';

/** The session cookie as the API reference shows it: as set over http, with placeholders. */
const SHOWN = { publicUrl: 'http:' };
export const SESSION_COOKIE_SHOWN = `${cookieHeader(SHOWN, SESSION_COOKIE, '<jwt>')}; Max-Age=<JWT_TTL s>`;
export const CLEARED_SESSION_COOKIE_SHOWN = clearedCookieHeader(SHOWN, SESSION_COOKIE);

/** A complete sign-in: the session cookie, a device cookie for a client new to the account, and the login answer. */
export function signedIn(ctx: Context, { token, user, deviceToken }: LoginResult) {
  const { config } = ctx.deps;
  ctx.response.headers.push(['set-cookie', cookieHeader(config, SESSION_COOKIE, token, config.jwtTtlSeconds)]);
  if (deviceToken) ctx.response.headers.push(['set-cookie', cookieHeader(config, deviceCookieName(config.publicUrl), deviceToken, DEVICE_TTL_SECONDS)]);
  return { success: true as const, token, user };
}

/** A logout: the session cookie is cleared. */
export function signedOut(ctx: Context) {
  ctx.response.headers.push(['set-cookie', clearedCookieHeader(ctx.deps.config, SESSION_COOKIE)]);
  return { success: true as const };
}
