import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPasswordHasher } from '../server/src/lib/passwords.ts';
import { eventually } from './helpers/wait.ts';

// The password hasher: argon2id on threads of their own at a lowered priority, so that
// requests on the event loop keep their latency while logins hash (server/src/lib/passwords.ts).

const test = suite('lib/passwords: argon2 on lowered-priority threads, a queue in front, NFC');

/** The nice value of each of this process's threads (Linux: /proc/self/task/<tid>/stat, field 19). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended while we read
    }
  });
}

const lowered = () => threadNiceValues().filter((nice) => nice === 10).length;

test('a hash verifies its password and no other; NFC and as-typed spellings match; garbage is false, not an error', async () => {
  const hasher = await createPasswordHasher({ concurrency: 1 });
  try {
    const stored = await hasher.hash('correct horse battery staple');
    assert.match(stored, /^\$argon2id\$/);
    assert.is(await hasher.verify(stored, 'correct horse battery staple'), true);
    assert.is(await hasher.verify(stored, 'correct horse battery stapler'), false);
    const composed = await hasher.hash('caf\u00e9 au lait noir');
    assert.is(await hasher.verify(composed, 'cafe\u0301 au lait noir'), true, 'a combining accent is the same password');
    assert.is(await hasher.verify('not an argon2 hash', 'anything at all'), false);
    assert.is(await hasher.verifyDummy('anything at all'), false);
    const finished: number[] = [];
    await Promise.all([0, 1, 2].map((n) => hasher.hash(`waiting its turn ${n}`).then(() => finished.push(n))));
    assert.equal(finished, [0, 1, 2], 'one thread: hashes finish in the order they were asked for');
  } finally {
    await hasher.close();
  }
});

test('hashes run on `concurrency` threads at nice 10, the rest queued; close ends the threads', async () => {
  assert.ok(existsSync('/proc/self/task'), 'this test reads thread priorities from /proc (Linux, as CI)');
  const before = lowered();
  const hasher = await createPasswordHasher({ concurrency: 2 });
  try {
    assert.is(lowered(), before, 'no thread before the first hash');
    const passwords = Array.from({ length: 5 }, (_, n) => `queued password number ${n}`);
    const hashes = await Promise.all(passwords.map((password) => hasher.hash(password)));
    assert.is(lowered(), before + 2, 'two hashing threads, both at nice 10');
    for (const [n, stored] of hashes.entries()) assert.ok(await hasher.verify(stored, passwords[n]), `hash ${n} is of its own password`);
  } finally {
    await hasher.close();
  }
  await eventually('the hashing threads gone after close', () => lowered() === before, 5_000);
});

test.run();
