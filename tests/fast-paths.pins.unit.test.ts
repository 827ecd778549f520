import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MADE_FOR } from '../gateway/src/fast-paths/index.ts';

// Each fast path (gateway/src/fast-paths/) was written against particular versions of the
// libraries it reaches into. Another version may still pass every other test and yet differ
// where no test looks: this fails first, naming what to compare again before MADE_FOR moves.

const test = suite('fast paths: the installed libraries are the versions the fast paths were made from');

/** The version of a package as installed, from its package.json (found beside its main entry). */
function installedVersion(name: string): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve(name));
  while (!dir.endsWith(join('node_modules', ...name.split('/')))) dir = dirname(dir);
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
}

test('each fast path names the installed version of every library it leans on', () => {
  const moved = MADE_FOR.flatMap(({ fastPath, versions, recheck }) =>
    Object.entries(versions)
      .filter(([name, version]) => installedVersion(name) !== version)
      .map(([name, version]) => `${fastPath} was made from ${name} ${version}, and ${installedVersion(name)} is installed: compare ${recheck}; then set its version in MADE_FOR (gateway/src/fast-paths/index.ts)`),
  );
  assert.equal(moved, [], moved.join('\n'));
});

test('every library the fast path reaches into is pinned', () => {
  assert.equal(MADE_FOR.map(({ fastPath, versions }) => [fastPath.split('/').pop(), Object.keys(versions).sort()]), [['openapi-handler.ts', ['@trpc/server', 'trpc-to-openapi']]]);
});

test.run();
