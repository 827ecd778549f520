import type { PasswordHasher } from '../server/src/index.ts';
import { summarize, type Measurement } from './measurement.ts';

/**
 * The most logins per second the password hasher allows: `concurrency` callers verifying a
 * real hash back to back for `durationMs`, through the service's own hasher and its bound.
 */
export async function measureHashCeiling(
  passwords: PasswordHasher,
  options: { concurrency: number; durationMs: number },
): Promise<Measurement> {
  const password = 'ceiling-password-1';
  const stored = await passwords.hash(password);
  await passwords.verify(stored, password);
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + options.durationMs;
  const caller = async () => {
    while (performance.now() < deadline) {
      const begun = performance.now();
      if (!(await passwords.verify(stored, password))) throw new Error('hash ceiling: verify returned false');
      latencies.push(performance.now() - begun);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, caller));
  return summarize(latencies, performance.now() - started);
}
