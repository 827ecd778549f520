import type { RateRule } from '../../lib/rate-limiter.ts';

/** The accounts module's request rate limits: windows kept in PostgreSQL (lib/rate-limiter.ts). */
export const ACCOUNT_RATE_RULES = {
  registerPerIp: { name: 'register-ip', limit: 20, windowSeconds: 3600 },
  registerPerAddress: { name: 'register-address', limit: 5, windowSeconds: 3600 },
  resendPerIp: { name: 'resend-ip', limit: 20, windowSeconds: 3600 },
  resendPerAddress: { name: 'resend-address', limit: 5, windowSeconds: 3600 },
  /** Uses of e-mailed tokens (reset, e-mail change): 256-bit tokens, but no endless tries either. */
  tokenUsesPerIp: { name: 'token-ip', limit: 30, windowSeconds: 3600 },
  emailChangesPerAccount: { name: 'email-change', limit: 5, windowSeconds: 3600 },
} satisfies Record<string, RateRule>;
