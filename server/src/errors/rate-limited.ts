import type { RateDecision } from '../lib/rate-limiter.ts';
import { AppError } from './errors.ts';

/**
 * A refusal is reported to the limiter (counted by rule in the metrics), then thrown as a 429
 * RATE_LIMITED. Each module keeps its own rules (`<module>.limits.ts`); this is the one way
 * any of them refuses.
 */
export function refuseIfLimited(decision: RateDecision): void {
  if (decision.allowed) return;
  decision.report();
  throw new AppError('RATE_LIMITED', undefined, { retryAfterSeconds: decision.retryAfterSeconds });
}
