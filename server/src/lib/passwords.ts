import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { hash } from '@node-rs/argon2';
import { randomToken } from './crypto.ts';

/** argon2id's cost: OWASP's minimum (19 MiB, 2 passes). @node-rs/argon2 defaults to argon2id. */
export const PASSWORD_COST = { memoryCost: 19456, timeCost: 2 };
export type PasswordCost = typeof PASSWORD_COST;

/**
 * The hashing threads' nice value. Where the CPU is contended, a thread at 10 gets about a
 * tenth of what one at 0 does: requests that only need the event loop (`/me`, webhooks)
 * keep their latency while logins hash, and logins take what the rest leaves. With a core
 * to spare nothing changes: a thread alone runs at full speed whatever its nice value.
 */
const HASHING_NICE = 10;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** Verifies against a hash of a random password, so an unknown e-mail costs the same time. */
  verifyDummy(password: string): Promise<false>;
  /** Ends the hashing threads (they do not keep the process alive meanwhile). */
  close(): Promise<void>;
}

/**
 * A hashing thread: takes one job at a time and runs argon2 synchronously on its own thread,
 * after lowering that thread's priority (on Linux the nice value is per thread; where it
 * cannot be lowered, it hashes at the normal priority). CommonJS, evaluated as a worker.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const argon2 = require(workerData.argon2);
try { require('node:os').setPriority(workerData.nice); } catch {}
parentPort.on('message', ({ op, args }) => {
  try {
    parentPort.postMessage({ value: op === 'hash' ? argon2.hashSync(...args) : argon2.verifySync(...args) });
  } catch (error) {
    parentPort.postMessage({ failed: true });
  }
});
`;

type Job = { op: 'hash' | 'verify'; args: unknown[] };

/**
 * `slots` hashing threads and a queue in front of them, first come first served. The threads
 * start with the first job, so a process that never hashes never starts one.
 */
function createHashingThreads(slots: number) {
  const argon2 = createRequire(import.meta.url).resolve('@node-rs/argon2');
  const spawn = () => {
    const thread = new Worker(THREAD_SOURCE, { eval: true, workerData: { argon2, nice: HASHING_NICE } });
    // Idle threads do not keep the process alive; one at work does (run() refs it).
    thread.unref();
    return thread;
  };
  const threads = new Set<Worker>();
  const idle: Worker[] = [];
  const waiting: Array<(thread: Worker) => void> = [];
  const release = (thread: Worker) => {
    const next = waiting.shift();
    if (next) next(thread);
    else idle.push(thread);
  };
  const take = (): Worker | Promise<Worker> => {
    if (!threads.size) {
      for (let n = 0; n < slots; n++) threads.add(spawn());
      idle.push(...threads);
    }
    return idle.pop() ?? new Promise<Worker>((resolve) => waiting.push(resolve));
  };
  return {
    async run<T>(job: Job): Promise<T> {
      const thread = await take();
      let crashed = false;
      thread.ref();
      try {
        const reply = await new Promise<{ value?: T; failed?: true }>((resolve, reject) => {
          thread.once('message', resolve);
          thread.once('error', (error) => {
            crashed = true;
            reject(error);
          });
          thread.postMessage(job);
        });
        if (reply.failed) throw new Error(`argon2 ${job.op} failed`);
        return reply.value as T;
      } finally {
        thread.removeAllListeners('message').removeAllListeners('error').unref();
        // A thread that died is replaced, so its slot is not lost.
        if (crashed) {
          threads.delete(thread);
          const fresh = spawn();
          threads.add(fresh);
          release(fresh);
        } else release(thread);
      }
    },
    async close() {
      await Promise.all([...threads].map((thread) => thread.terminate()));
      threads.clear();
      idle.length = 0;
    },
  };
}

/**
 * Passwords are hashed in NFC, so the same password typed on two keyboards (a precomposed
 * or a combining accent) is the same password. A hash made before that rule was made from
 * the text as typed: when the NFC form does not match and differs from it, the text as typed
 * is tried too, for the real hash and the dummy alike, so timing still says nothing.
 *
 * argon2 runs off the event loop, on `concurrency` threads of lowered priority (see
 * HASHING_NICE): with every core hashing at full priority, `/me` waited behind logins.
 */
export async function createPasswordHasher(options: { concurrency: number; cost?: PasswordCost }): Promise<PasswordHasher> {
  const argon2Options = { ...(options.cost ?? PASSWORD_COST), parallelism: 1 };
  const threads = createHashingThreads(options.concurrency);
  const dummyHash = await hash(randomToken(), argon2Options);
  const verifyOnce = (stored: string, password: string) => threads.run<boolean>({ op: 'verify', args: [stored, password] }).catch(() => false);
  const check = async (stored: string, password: string) => {
    const normalized = password.normalize('NFC');
    if (await verifyOnce(stored, normalized)) return true;
    return normalized !== password && verifyOnce(stored, password);
  };
  return {
    hash: (password) => threads.run<string>({ op: 'hash', args: [password.normalize('NFC'), argon2Options] }),
    verify: check,
    async verifyDummy(password) {
      await check(dummyHash, password);
      return false;
    },
    close: () => threads.close(),
  };
}
