import { hash, verify } from '@node-rs/argon2';
import { randomToken } from './crypto.ts';

/** OWASP's argon2id minimum; @node-rs/argon2 defaults to argon2id. */
const ARGON2_OPTIONS = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** Verifies against a hash of a random password, so an unknown e-mail costs the same time. */
  verifyDummy(password: string): Promise<false>;
}

/**
 * A tiny semaphore. argon2 runs on libuv's thread pool, off the event loop, but with every
 * core hashing the event loop itself gets starved: hashes queue for a bounded number of slots.
 */
function createLimiter(slots: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async function limit<T>(work: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so none can jump the queue.
    if (active >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    else active += 1;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active -= 1;
    }
  };
}

/**
 * Passwords are hashed in NFC, so the same password typed on two keyboards (a precomposed
 * or a combining accent) is the same password. A hash made before that rule was made from
 * the text as typed: when the NFC form does not match and differs from it, the text as typed
 * is tried too, for the real hash and the dummy alike, so timing still says nothing.
 */
export async function createPasswordHasher(options: { concurrency: number }): Promise<PasswordHasher> {
  const limit = createLimiter(options.concurrency);
  const dummyHash = await hash(randomToken(), ARGON2_OPTIONS);
  const verifyOnce = (stored: string, password: string) => limit(() => verify(stored, password).catch(() => false));
  const check = async (stored: string, password: string) => {
    const normalized = password.normalize('NFC');
    if (await verifyOnce(stored, normalized)) return true;
    return normalized !== password && verifyOnce(stored, password);
  };
  return {
    hash: (password) => limit(() => hash(password.normalize('NFC'), ARGON2_OPTIONS)),
    verify: check,
    async verifyDummy(password) {
      await check(dummyHash, password);
      return false;
    },
  };
}
