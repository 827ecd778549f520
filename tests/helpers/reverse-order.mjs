// `TEST_ORDER=reverse npm test` loads this into every test file's process (tests/run.mjs):
// each file's `import { suite, test } from 'uvu'` then gets uvu-reversed.mjs, which runs
// the file's tests last to first. A test that passes only after another one has run leans
// on its leftovers; this is how the suite shows it has none.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const REVERSED = new URL('./uvu-reversed.mjs', import.meta.url).href;

// This same file is the hooks module: Node loads it again in its hooks thread.
if (isMainThread) register(import.meta.url);

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'uvu' && context.parentURL !== REVERSED) return { url: REVERSED, shortCircuit: true };
  return nextResolve(specifier, context);
}
