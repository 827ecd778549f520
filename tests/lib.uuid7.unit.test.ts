import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { uuidv7 } from '../server/src/lib/uuid7.ts';

// The inbox's ids (lib/uuid7.ts): pg-boss hands out jobs inserted together in id order, so
// ids made one after another must sort in the order they were made.

const test = suite('uuidv7: time-ordered ids');

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('version 7, the RFC variant, and the time of making in its first 48 bits', () => {
  const before = Date.now();
  const id = uuidv7();
  const after = Date.now();
  assert.match(id, UUID_V7);
  const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
  assert.ok(ms >= before && ms <= after + 1, `${ms} within ${before}..${after}`);
});

test('ids made one after another sort in that order, many within one millisecond; none twice', () => {
  const ids = Array.from({ length: 20_000 }, () => uuidv7());
  for (const id of ids) assert.match(id, UUID_V7);
  const sorted = [...ids].sort();
  assert.equal(sorted, ids, 'as text, as PostgreSQL compares uuid');
  assert.is(new Set(ids).size, ids.length);
});

test.run();
