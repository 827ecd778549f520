// tests/run.mjs loads this into every test file's process: each file's `import … from 'uvu'`
// then gets uvu-loud.mjs, which prints an error a `before` hook throws (uvu drops it). With
// TEST_ORDER=reverse it is loaded after reverse-order.mjs, so it resolves first and the
// chain is file → uvu-loud.mjs → uvu-reversed.mjs → uvu.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const LOUD = new URL('./uvu-loud.mjs', import.meta.url).href;
const REVERSED = new URL('./uvu-reversed.mjs', import.meta.url).href;

// This same file is the hooks module: Node loads it again in its hooks thread.
if (isMainThread) register(import.meta.url);

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'uvu' && context.parentURL !== LOUD && context.parentURL !== REVERSED) return { url: LOUD, shortCircuit: true };
  return nextResolve(specifier, context);
}
