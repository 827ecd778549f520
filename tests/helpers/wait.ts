/** What a check gives back while its condition does not hold yet. */
type NotYet = undefined | null | false | 0 | '';

const POLL_INTERVAL_MS = 100;

/**
 * Polls `check` until it returns a truthy value, and returns that value. A check that throws
 * counts as "not yet" (a service that is restarting refuses connections); once `timeoutMs`
 * has passed, the failure names `what` and the last such error. `what` comes first so that
 * a call reads as a sentence:
 *
 *   await eventually('the plan applied', async () => (await plan()) === 'pro', 10_000);
 */
export async function eventually<T>(what: string, check: () => Promise<T | NotYet> | T | NotYet, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as T;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
