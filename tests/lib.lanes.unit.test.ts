import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLanePolicy, inChunks, inLanes, inStreams, inTurn, MAX_LANES, PER_TRANSACTION } from '../server/src/lib/lanes.ts';

const test = suite('lib/lanes: one lane while deliveries arrive, every lane once a backlog lasts');

function policy(embedded = false) {
  let at = 1_000;
  const lanes = createLanePolicy({ embedded, arrivingMs: 250, backlogMs: 2_000, now: () => at });
  return { lanes, advance: (ms: number) => (at += ms) };
}

test('without deliveries arriving, every lane', () => {
  const { lanes } = policy();
  assert.is(lanes.lanes(), MAX_LANES);
  lanes.fetched(true);
  assert.is(lanes.lanes(), MAX_LANES);
});

test('while deliveries arrive, one lane; every lane again once none arrived for 250 ms', () => {
  const { lanes, advance } = policy();
  lanes.arrived();
  lanes.fetched(false);
  assert.is(lanes.lanes(), 1);
  advance(249);
  assert.is(lanes.lanes(), 1);
  advance(1);
  assert.is(lanes.lanes(), MAX_LANES);
});

test('full batches while deliveries arrive: one lane for 2 s, then every lane until a batch comes back short', () => {
  const { lanes, advance } = policy();
  for (let ms = 0; ms < 2_000; ms += 100) {
    lanes.arrived();
    lanes.fetched(true);
    assert.is(lanes.lanes(), 1, `a backlog of ${ms} ms is a burst`);
    advance(100);
  }
  lanes.arrived();
  lanes.fetched(true);
  assert.is(lanes.lanes(), MAX_LANES, 'a backlog of 2 s: effects would fall behind for good');
  advance(100);
  lanes.arrived();
  lanes.fetched(false);
  assert.is(lanes.lanes(), 1, 'caught up: back to one lane while deliveries arrive');
  advance(100);
  lanes.arrived();
  lanes.fetched(true);
  assert.is(lanes.lanes(), 1, 'a new backlog counts from its own start');
});

test('the embedded database: one lane of one entry, whatever happens', () => {
  const { lanes, advance } = policy(true);
  assert.is(lanes.lanes(), 1);
  lanes.fetched(true);
  advance(10_000);
  lanes.fetched(true);
  assert.is(lanes.lanes(), 1);
  assert.is(lanes.perTransaction(), 1);
});

test('a transaction takes few entries in the one lane beside arriving deliveries, more in every lane', () => {
  const { lanes, advance } = policy();
  assert.is(lanes.perTransaction(), PER_TRANSACTION.everyLane, 'nothing arriving: every lane');
  lanes.arrived();
  assert.is(lanes.perTransaction(), PER_TRANSACTION.oneLane);
  advance(250);
  assert.is(lanes.perTransaction(), PER_TRANSACTION.everyLane, 'arrivals stopped');
  for (let ms = 0; ms <= 2_000; ms += 100) {
    lanes.arrived();
    lanes.fetched(true);
    advance(100);
  }
  lanes.arrived();
  assert.is(lanes.lanes(), MAX_LANES);
  assert.is(lanes.perTransaction(), PER_TRANSACTION.everyLane, 'a backlog that lasts: every lane, even while deliveries arrive');
  assert.ok(PER_TRANSACTION.oneLane < PER_TRANSACTION.everyLane);
});

/** Items that each wait for the test to finish them: which started, and how many ran at once. */
function heldItems(count: number) {
  const started: number[] = [];
  const finish = new Map<number, (error?: Error) => void>();
  let running = 0;
  let most = 0;
  const run = (item: number) =>
    new Promise<void>((resolve, reject) => {
      started.push(item);
      most = Math.max(most, ++running);
      finish.set(item, (error) => {
        running--;
        if (error) reject(error);
        else resolve();
      });
    });
  return { items: Array.from({ length: count }, (_, i) => i), run, started, finish, most: () => most };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('inLanes: items in order, as many at once as the count, which is read again after each item', async () => {
  const held = heldItems(8);
  const { items, started, finish, most } = held;
  let count = 2;
  const done = inLanes(inTurn(items), () => count, held.run);
  await settle();
  assert.equal(started, [0, 1], 'two lanes, each with the next item');
  count = 4;
  finish.get(0)!();
  await settle();
  assert.equal(started, [0, 1, 2, 3, 4], 'after an item the lane takes the next and starts two more');
  count = 1;
  for (const item of [1, 2, 3]) finish.get(item)!();
  await settle();
  assert.equal(started, [0, 1, 2, 3, 4], 'lanes above the count end instead of taking another');
  finish.get(4)!();
  for (let item = 5; item < 8; item++) {
    await settle();
    assert.is(started.at(-1), item, 'one lane again, in order');
    finish.get(item)!();
  }
  await done;
  assert.is(most(), 4);
});

test('inLanes: a failure stops the other lanes after their item, and is thrown once all are done', async () => {
  const held = heldItems(6);
  const { items, started, finish } = held;
  let settled = false;
  const done = inLanes(inTurn(items), () => 2, held.run).finally(() => (settled = true));
  const outcome = done.then(() => 'resolved', (error: Error) => error.message);
  await settle();
  finish.get(0)!(new Error('effect failed'));
  await settle();
  assert.equal(started, [0, 1], 'no item started after the failure');
  assert.not.ok(settled, 'the other lane is still at its item');
  finish.get(1)!();
  assert.is(await outcome, 'effect failed');
});

test('inLanes: nothing starts once stopped, and no items start no lane', async () => {
  let runs = 0;
  await inLanes(inTurn([1, 2, 3]), () => 2, async () => void runs++, () => true);
  await inLanes(inTurn([]), () => 2, async () => void runs++);
  assert.is(runs, 0);
});

test('inChunks: each chunk as large as the size when it is taken, the last one what is left', () => {
  let size = 2;
  const take = inChunks([1, 2, 3, 4, 5, 6, 7, 8], () => size);
  assert.equal(take(), [1, 2]);
  size = 4;
  assert.equal(take(), [3, 4, 5, 6]);
  assert.equal(take(), [7, 8]);
  assert.is(take(), undefined);
});

test('inLanes takes a chunk when a lane is free for it: a size changed meanwhile applies to the next one', async () => {
  const ran: number[][] = [];
  const releases: Array<() => void> = [];
  let size = 10;
  const done = inLanes(inChunks(Array.from({ length: 30 }, (_, i) => i), () => size), () => 1, (chunk) => {
    ran.push(chunk);
    return new Promise<void>((resolve) => releases.push(resolve));
  });
  await settle();
  assert.equal(ran.map((chunk) => chunk.length), [10]);
  size = 15;
  releases.shift()!();
  await settle();
  assert.equal(ran.map((chunk) => chunk.length), [10, 15], 'the chunk after the first is cut at the new size');
  releases.shift()!();
  await settle();
  releases.shift()!();
  await done;
  assert.equal(ran.map((chunk) => chunk.length), [10, 15, 5]);
});

/** Items named by their stream and place in it ('a1' is stream a's first; '-' items have none). */
const streamOfName = (name: string) => (name.startsWith('-') ? undefined : name[0]);

const allUnits = <T>(take: () => T[][] | undefined) => {
  const units: T[][][] = [];
  for (let unit = take(); unit; unit = take()) units.push(unit);
  return units;
};

test('inStreams: a chunk takes each stream whole, in the order of its items, with items of no stream between', () => {
  const take = inStreams(['a1', '-1', 'b1', 'a2', '-2', 'b2', '-3', 'a3', '-4'], () => 5, streamOfName);
  assert.equal(allUnits(take), [[['a1', 'a2', 'a3', '-1', '-2']], [['b1', 'b2', '-3', '-4']]], 'b does not fit beside a: it waits for the next chunk, not split');
});

test('inStreams: a stream longer than a chunk is a unit of its own, in chunks, in order; with no streams it is inChunks', () => {
  const items = ['-1', 'a1', 'a2', 'a3', 'a4', 'a5', '-2', 'b1', '-3'];
  let size = 2;
  const take = inStreams(items, () => size, streamOfName);
  assert.equal(take(), [['-1', '-2']], 'a is too long to join: the items after it fill the chunk');
  assert.equal(take(), [['a1', 'a2'], ['a3', 'a4'], ['a5']]);
  size = 3;
  assert.equal(take(), [['b1', '-3']]);
  assert.is(take(), undefined);
  const plain = Array.from({ length: 7 }, (_, i) => `-${i}`);
  assert.equal(allUnits(inStreams(plain, () => 3, streamOfName)).map((unit) => unit.flat()), [['-0', '-1', '-2'], ['-3', '-4', '-5'], ['-6']]);
});

test('inStreams in four lanes: each stream in one lane, in its order, while other streams run beside it', async () => {
  // 60 items of 5 streams and some of none, in a shuffled but fixed order; chunks of 4.
  const names: string[] = [];
  const next = new Map<string, number>();
  for (let i = 0; i < 60; i++) {
    const stream = i % 7 === 3 ? '-' : 'abcde'[(i * 7 + (i >> 2)) % 5];
    next.set(stream, (next.get(stream) ?? 0) + 1);
    names.push(`${stream}${next.get(stream)}`);
  }
  const applied: string[] = [];
  const laneOf = new Map<string, number>();
  const releases: Array<() => void> = [];
  let lane = 0;
  const done = inLanes(inStreams(names, () => 4, streamOfName), () => 4, async (chunks) => {
    const mine = lane++;
    for (const chunk of chunks) {
      for (const name of chunk) {
        const stream = streamOfName(name);
        if (stream) assert.is(laneOf.get(stream) ?? mine, mine, `${name} in the lane of its stream`);
        if (stream) laneOf.set(stream, mine);
      }
      // Each chunk waits until the test lets it finish: the lanes' chunks interleave.
      await new Promise<void>((resolve) => releases.push(resolve));
      applied.push(...chunk);
    }
  });
  let turns = 0;
  while (applied.length < names.length) {
    assert.ok(turns++ < 1_000, 'the lanes applied every item');
    await settle();
    // The latest lane's chunk first: an order nothing but the streams' rule keeps in line.
    releases.pop()?.();
  }
  await done;
  assert.is(applied.length, names.length);
  for (const stream of 'abcde') {
    const inOrder = names.filter((name) => name[0] === stream);
    assert.equal(applied.filter((name) => name[0] === stream), inOrder, `stream ${stream} in its order`);
  }
  assert.ok(lane > 1, 'more than one lane ran');
});

test.run();
