import type { Callback, Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { TestService } from './service.ts';

/** Log lines that tell of a fault of ours: anything logged as an error or worse, and any 5xx answer. */
export function faultLines(lines: readonly string[]): Array<Record<string, unknown>> {
  return lines.map((line) => JSON.parse(line)).filter((line) => line.level === 'error' || line.level === 'fatal' || line.status >= 500);
}

/**
 * A suite whose every test must leave no fault in its service's log. Each test is checked
 * against the lines logged while it ran, not the log so far: the check holds whatever ran
 * before it, and a fault is reported by the test that caused it.
 */
export function checkedForFaults<C extends { service: TestService }>(test: Test<C>): Test<C> {
  const checked = (name: string, handler: Callback<C>) =>
    test(name, async (context) => {
      const from = context.service.logs.lines.length;
      await handler(context);
      assert.equal(faultLines(context.service.logs.lines.slice(from)), [], `${name}: nothing logged as an error, no 5xx`);
    });
  return Object.assign(checked, { only: test.only, skip: test.skip, before: test.before, after: test.after, run: test.run });
}
