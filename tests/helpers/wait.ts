/** What a check gives back while its condition does not hold yet. */
type NotYet = undefined | null | false | 0 | '';

const POLL_INTERVAL_MS = 100;

/**
 * How long a test waits for what it expects before it fails: generous, since a wait that ends
 * early costs nothing, while a short one fails a correct test on a loaded machine (two copies
 * of the suite side by side on two cores make every step several times slower). No test
 * asserts speed with a deadline: how fast is `npm run bench`'s to say. A shorter deadline is
 * passed only where the thing waited for has a bound of its own (a send's timeout, say).
 */
export const PATIENCE_MS = 120_000;

/**
 * Polls `check` until it returns a truthy value, and returns that value. A check that throws
 * counts as "not yet" (a service that is restarting refuses connections); once `timeoutMs`
 * (PATIENCE_MS unless told) has passed, the failure names `what` and the last such error.
 * `what` comes first so that a call reads as a sentence:
 *
 *   await eventually('the plan applied', async () => (await plan()) === 'pro');
 */
export async function eventually<T>(what: string, check: () => Promise<T | NotYet> | T | NotYet, timeoutMs = PATIENCE_MS): Promise<T> {
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
