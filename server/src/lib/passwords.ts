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
 * argon2 itself refused the job: for a verification, a stored value that is no argon2 hash.
 * Unlike a thread that died or a hasher that was closed, that says the password does not match.
 */
class Argon2Refused extends Error {
  constructor(op: Job['op']) {
    super(`argon2 ${op} failed`);
  }
}

type Reply = { value?: unknown; failed?: true };
type Waiter = { resolve: (reply: Reply) => void; reject: (error: unknown) => void };

/**
 * How many jobs a thread holds at once: the one it runs and the next. Were it handed its
 * next job only once its reply reached the event loop, it would idle for as long as the loop
 * is busy with other requests each time (with the loop blocked 3 ms at a time, 50
 * verifications ran at 93 a second instead of 106 to 113); with the next already in its
 * port it starts that at once.
 */
const JOBS_PER_THREAD = 2;

/**
 * `slots` hashing threads and a queue in front of them, first come first served. The threads
 * start with the first job, so a process that never hashes never starts one. A thread that
 * dies fails the jobs it held and is replaced, so its slot is not lost.
 */
function createHashingThreads(slots: number) {
  const argon2 = createRequire(import.meta.url).resolve('@node-rs/argon2');
  /** `retired`: closed, its thread ending; it takes no more jobs and is not replaced. */
  type Slot = { thread: Worker; held: Waiter[]; retired: boolean; failure?: unknown };
  const pool = new Set<Slot>();
  const queue: Array<{ job: Job; waiter: Waiter }> = [];

  // Hands queued jobs to a slot with room; an idle thread does not keep the process alive.
  const feed = (slot: Slot) => {
    while (slot.held.length < JOBS_PER_THREAD && queue.length) {
      const { job, waiter } = queue.shift()!;
      if (!slot.held.length) slot.thread.ref();
      slot.held.push(waiter);
      slot.thread.postMessage(job);
    }
    if (!slot.held.length) slot.thread.unref();
  };
  const spawn = () => {
    const slot: Slot = { thread: new Worker(THREAD_SOURCE, { eval: true, workerData: { argon2, nice: HASHING_NICE } }), held: [], retired: false };
    slot.thread.unref();
    // Replies come in the order the jobs went in.
    slot.thread.on('message', (reply: Reply) => {
      const waiter = slot.held.shift();
      if (!slot.retired) feed(slot);
      waiter?.resolve(reply);
    });
    slot.thread.on('error', (error) => (slot.failure = error));
    // Replaced at once only for jobs waiting, else at the next job: a thread that cannot
    // start (its argon2 missing) fails jobs, it does not respawn in a loop.
    slot.thread.on('exit', () => {
      pool.delete(slot);
      for (const waiter of slot.held.splice(0)) waiter.reject(slot.failure ?? new Error('a hashing thread exited'));
      if (!slot.retired && queue.length) feed(spawn());
    });
    pool.add(slot);
    return slot;
  };
  // The slot holding the fewest jobs, when one has room.
  const roomiest = () => {
    let best: Slot | undefined;
    for (const slot of pool) if (slot.held.length < JOBS_PER_THREAD && (!best || slot.held.length < best.held.length)) best = slot;
    return best;
  };
  return {
    async run<T>(job: Job): Promise<T> {
      while (pool.size < slots) spawn();
      const reply = await new Promise<Reply>((resolve, reject) => {
        queue.push({ job, waiter: { resolve, reject } });
        const slot = roomiest();
        if (slot) feed(slot);
      });
      if (reply.failed) throw new Argon2Refused(job.op);
      return reply.value as T;
    },
    // The closed threads leave the pool at once: a job asked for while they end starts new
    // ones, and is neither handed to a thread on its way out nor left without one.
    async close() {
      const retiring = [...pool];
      pool.clear();
      for (const slot of retiring) slot.retired = true;
      for (const { waiter } of queue.splice(0)) waiter.reject(new Error('the password hasher was closed'));
      await Promise.all(retiring.map((slot) => slot.thread.terminate()));
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
  // Only argon2's own refusal is a mismatch: a thread that died or a hasher closed under the
  // job is a failure of ours, not a wrong password to tell the user and count against them.
  const verifyOnce = (stored: string, password: string) =>
    threads.run<boolean>({ op: 'verify', args: [stored, password] }).catch((error: unknown) => {
      if (error instanceof Argon2Refused) return false;
      throw error;
    });
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
