// uvu, except that an error thrown by a suite's `before` hook is printed before uvu sees it.
// uvu's runner runs the hooks inside a `try` whose `finally` returns, so such an error is
// lost: a file whose `before` threw showed "0 passed, N failed" and no reason at all.
// tests/run.mjs loads uvu-loud-hooks.mjs, which hands every test file this module for 'uvu'.
// (A `before.each` or `after` hook that throws is reported by uvu itself.)
import * as uvu from 'uvu';

function loud(real, name) {
  const { before } = real;
  const logged = (handler) => async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      console.error(`the before hook of ${name ? `"${name}"` : 'the file'} threw, so none of its tests ran:\n${error?.stack ?? error}`);
      throw error;
    }
  };
  real.before = Object.assign((handler) => before(logged(handler)), { each: before.each });
  return real;
}

export const suite = (name, state) => loud(uvu.suite(name, state), name);
export const test = loud(uvu.test, '');
export const exec = uvu.exec;
