import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPasswordHasher } from '../server/src/lib/passwords.ts';
import { eventually } from './helpers/wait.ts';

// The password hasher: argon2id on threads of their own at a lowered priority, so that
// requests on the event loop keep their latency while logins hash, each thread holding its
// next job so it never waits for the event loop between two (server/src/lib/passwords.ts).

const test = suite('lib/passwords: argon2 on lowered-priority threads, a queue in front, NFC');

/** This process's threads at nice 10, the hashing threads, by thread id (Linux: /proc/self/task/<tid>/stat, field 19). */
function loweredThreads(): string[] {
  return readdirSync('/proc/self/task').filter((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16] === '10';
    } catch {
      return false; // the thread ended while we read
    }
  });
}

const lowered = () => loweredThreads().length;

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
  await eventually('the hashing threads gone after close', () => lowered() === before);
});

/** CPU time a thread of this process has run, in ns (Linux: /proc/self/task/<tid>/schedstat). */
const cpuTimeOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);

test('a thread holds its next job: it runs it while the event loop is blocked, not after', async () => {
  const earlier = new Set(loweredThreads());
  const hasher = await createPasswordHasher({ concurrency: 1 });
  try {
    const stored = await hasher.hash('the next job is already there');
    const [tid] = loweredThreads().filter((thread) => !earlier.has(thread));
    // The thread's CPU time, not the clock: other processes on the machine do not change it.
    const single: number[] = [];
    for (let n = 0; n < 3; n++) {
      const before = cpuTimeOf(tid);
      await hasher.verify(stored, 'the next job is already there');
      single.push(cpuTimeOf(tid) - before);
    }
    const one = Math.min(...single);
    const both = [hasher.verify(stored, 'the next job is already there'), hasher.verify(stored, 'the next job is already there')];
    // Nothing on this thread can hand the hashing thread a job while it spins: a thread that
    // waited for its next job would stop after one verification's worth.
    const start = cpuTimeOf(tid);
    const deadline = performance.now() + 10_000;
    while (cpuTimeOf(tid) - start < 1.6 * one && performance.now() < deadline);
    const ran = (cpuTimeOf(tid) - start) / one;
    assert.ok(ran >= 1.6, `the thread ran ${ran.toFixed(2)} verifications' worth while the event loop was blocked`);
    assert.equal(await Promise.all(both), [true, true]);
  } finally {
    await hasher.close();
  }
});

test('close fails every job it ends, the queued ones included, a verification too; the hasher starts again on the next', async () => {
  const hasher = await createPasswordHasher({ concurrency: 1 });
  const jobs = Array.from({ length: 5 }, (_, n) => hasher.hash(`closed before its turn ${n}`).then(
    () => 'hashed',
    (error: Error) => error.message,
  ));
  await hasher.close();
  const outcomes = await Promise.all(jobs);
  assert.ok(outcomes.slice(2).every((outcome) => outcome === 'the password hasher was closed'), `queued jobs fail: ${outcomes.join(', ')}`);
  const stored = await hasher.hash('closed under its verification');
  const verification = hasher.verify(stored, 'closed under its verification').then(
    (matched) => matched,
    (error: Error) => error.message,
  );
  await hasher.close();
  // Held by its thread, it ends with the thread: an error, not a mismatch.
  assert.is(await verification, 'a hashing thread exited');
  assert.match(await hasher.hash('after the close'), /^\$argon2id\$/);
  await hasher.close();
});

test('a job asked for while the hasher closes runs on a new thread; that thread ends with the next close', async () => {
  const before = lowered();
  const hasher = await createPasswordHasher({ concurrency: 1 });
  await hasher.hash('the first thread starts');
  const closing = hasher.close();
  // Asked for before the old thread has ended: it must not be handed to that thread, nor be
  // run on a thread the close then forgets.
  const during = hasher.hash('asked for while closing').then(
    (stored) => stored,
    (error: Error) => error.message,
  );
  await closing;
  assert.match(await during, /^\$argon2id\$/);
  await hasher.close();
  await eventually('every hashing thread gone after the second close', () => lowered() === before);
});

test('a thread that dies fails the jobs it held; the queued ones run on its replacement', async () => {
  const hasher = await createPasswordHasher({ concurrency: 1 });
  const post = Worker.prototype.postMessage;
  try {
    const stored = await hasher.hash('the thread dies under it');
    // The thread is ended as its first job reaches it, the way a crash would end it.
    let ended = false;
    Worker.prototype.postMessage = function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
      post.apply(this, args);
      if (!ended) {
        ended = true;
        void this.terminate();
      }
    };
    const outcomes = await Promise.all(
      [0, 1, 2].map(() =>
        hasher.verify(stored, 'the thread dies under it').then(
          (matched) => matched,
          (error: Error) => error.message,
        ),
      ),
    );
    Worker.prototype.postMessage = post;
    // A lost thread is our failure, not a wrong password: the caller answers with an error
    // instead of telling the user their password is wrong and counting it against them.
    assert.equal(outcomes, ['a hashing thread exited', 'a hashing thread exited', true], 'the two it held fail, the third runs');
    assert.is(await hasher.verify(stored, 'the thread dies under it'), true);
  } finally {
    Worker.prototype.postMessage = post;
    await hasher.close();
  }
});

test.run();
