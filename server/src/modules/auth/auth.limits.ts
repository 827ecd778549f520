import { AppError } from '../../errors/errors.ts';
import type { RateDecision, RateRule } from '../../lib/rate-limiter.ts';

/** Every request rate limit of the auth module: windows kept in PostgreSQL (lib/rate-limiter.ts). */
export const AUTH_RATE_RULES = {
  loginPerIp: { name: 'login-ip', limit: 100, windowSeconds: 15 * 60 },
  loginPerAccountIp: { name: 'login-account-ip', limit: 10, windowSeconds: 15 * 60 },
  failedLoginsPerAccount: { name: 'login-failed', limit: 100, windowSeconds: 3600 },
  failedLoginsPerDevice: { name: 'login-device', limit: 10, windowSeconds: 3600 },
  registerPerIp: { name: 'register-ip', limit: 20, windowSeconds: 3600 },
  registerPerAddress: { name: 'register-address', limit: 5, windowSeconds: 3600 },
  resendPerIp: { name: 'resend-ip', limit: 20, windowSeconds: 3600 },
  resendPerAddress: { name: 'resend-address', limit: 5, windowSeconds: 3600 },
  forgotPerIp: { name: 'forgot-ip', limit: 20, windowSeconds: 3600 },
  forgotPerAddress: { name: 'forgot-address', limit: 5, windowSeconds: 3600 },
  /** Uses of e-mailed tokens (reset, e-mail change): 256-bit tokens, but no endless tries either. */
  tokenUsesPerIp: { name: 'token-ip', limit: 30, windowSeconds: 3600 },
  /** Password confirmations of a signed-in caller (change password, e-mail, delete). */
  passwordChecksPerCaller: { name: 'password-check', limit: 10, windowSeconds: 3600 },
  emailChangesPerAccount: { name: 'email-change', limit: 5, windowSeconds: 3600 },
} satisfies Record<string, RateRule>;

/** A refusal is reported to the limiter (counted by rule in the metrics), then thrown as a 429 RATE_LIMITED. */
export function refuseIfLimited(decision: RateDecision): void {
  if (decision.allowed) return;
  decision.report();
  throw new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: decision.retryAfterSeconds });
}
