import { rateLimitSubject, type RateCheck, type RateRule } from '../../lib/rate-limiter.ts';

/**
 * The sign-in's request rate limits: windows kept in PostgreSQL (lib/rate-limiter.ts). The
 * failed-login count of an account is also run down by wrong passwords and codes elsewhere
 * (passwords/, mfa/), which is why the face exports these.
 */
export const SESSION_RATE_RULES = {
  loginPerIp: { name: 'login-ip', limit: 100, windowSeconds: 15 * 60 },
  loginPerAccountIp: { name: 'login-account-ip', limit: 10, windowSeconds: 15 * 60 },
  failedLoginsPerAccount: { name: 'login-failed', limit: 100, windowSeconds: 3600 },
  failedLoginsPerDevice: { name: 'login-device', limit: 10, windowSeconds: 3600 },
} satisfies Record<string, RateRule>;

/**
 * The per-account-and-client count of a sign-in's step under `address` (the account's, or
 * the one a provider asserted) from the client at `ip` (its /64 for IPv6).
 */
export const perAccountClient = (address: string, ip: string): RateCheck => ({ rule: SESSION_RATE_RULES.loginPerAccountIp, key: `${address}|${rateLimitSubject(ip)}` });
