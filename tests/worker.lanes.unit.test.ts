import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLanePolicy, MAX_LANES } from '../server/src/roles/worker-lanes.ts';

const test = suite('roles/worker-lanes: one lane while deliveries arrive, every lane once a backlog lasts');

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

test('the embedded database: one lane, whatever happens', () => {
  const { lanes, advance } = policy(true);
  assert.is(lanes.lanes(), 1);
  lanes.fetched(true);
  advance(10_000);
  lanes.fetched(true);
  assert.is(lanes.lanes(), 1);
});

test.run();
