import { randomFillSync } from 'node:crypto';

// Random bytes drawn 4 KiB at a time, as node's randomUUID does: one system call per 256 ids.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

let lastMs = 0;
let counter = 0;

/**
 * A UUID of version 7 (RFC 9562): the time in milliseconds, a 12-bit counter, then random
 * bits. Ids made one after another by this process sort in the order they were made, as text
 * and as PostgreSQL's uuid (the counter goes on within a millisecond, and the time never goes
 * back). The inbox's rows get such ids, and a job made for a row takes the row's: pg-boss
 * hands out jobs inserted together in id order, which is then the order they arrived in.
 */
export function uuidv7(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  pool.copy(bytes, 8, poolOffset, poolOffset + 8);
  poolOffset += 8;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
