// uvu, except that a suite registers its tests with the real uvu last to first when it is
// run. Hooks (before, after, and their .each) pass through untouched. See reverse-order.mjs.
import * as uvu from 'uvu';

function reversed(real) {
  const tests = [];
  const only = [];
  const test = (name, handler) => void tests.push([name, handler]);
  test.only = (name, handler) => void only.push([name, handler]);
  test.skip = real.skip;
  test.before = real.before;
  test.after = real.after;
  test.run = () => {
    for (const [name, handler] of tests.splice(0).reverse()) real(name, handler);
    for (const [name, handler] of only.splice(0).reverse()) real.only(name, handler);
    real.run();
  };
  return test;
}

export const suite = (name, state) => reversed(uvu.suite(name, state));
export const test = reversed(uvu.test);
export const exec = uvu.exec;
