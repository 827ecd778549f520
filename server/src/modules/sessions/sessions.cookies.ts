import { deviceCookieName, SESSION_COOKIE, type Context } from '../../trpc/context.ts';
import { DEVICE_TTL_SECONDS } from './sessions.devices.ts';
import type { LoginResult } from './sessions.start.ts';

function cookie(ctx: Context, name: string, value: string, maxAgeSeconds: number): string {
  const secure = ctx.deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/** A complete sign-in: the session cookie, a device cookie for a client new to the account, and the login answer. */
export function signedIn(ctx: Context, { token, user, deviceToken }: LoginResult) {
  ctx.response.headers.push(['set-cookie', cookie(ctx, SESSION_COOKIE, token, ctx.deps.config.jwtTtlSeconds)]);
  if (deviceToken) ctx.response.headers.push(['set-cookie', cookie(ctx, deviceCookieName(ctx.deps.config.publicUrl), deviceToken, DEVICE_TTL_SECONDS)]);
  return { success: true as const, token, user };
}

/** A logout: the session cookie is cleared. */
export function signedOut(ctx: Context) {
  ctx.response.headers.push(['set-cookie', cookie(ctx, SESSION_COOKIE, '', 0)]);
  return { success: true as const };
}
