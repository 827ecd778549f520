import type { RateRule } from '../../lib/rate-limiter.ts';

/** The passwords module's request rate limits: windows kept in PostgreSQL (lib/rate-limiter.ts). */
export const PASSWORD_RATE_RULES = {
  forgotPerIp: { name: 'forgot-ip', limit: 20, windowSeconds: 3600 },
  forgotPerAddress: { name: 'forgot-address', limit: 5, windowSeconds: 3600 },
  /** Password confirmations of a signed-in caller (change password, e-mail, delete). */
  passwordChecksPerCaller: { name: 'password-check', limit: 10, windowSeconds: 3600 },
} satisfies Record<string, RateRule>;
