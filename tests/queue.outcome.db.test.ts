import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Db } from '../server/src/lib/db.ts';
import { startQueue, type PgBoss } from '../server/src/lib/queue.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// pg-boss 10 records a job's outcome (complete or fail) without awaiting it. A database
// error at that moment must not end the process, and must not lose the job either.

const QUEUE = 'outcome-test';
const LATE_QUEUE = 'outcome-late-test';

let service: TestService;
let boss: PgBoss | undefined;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

test.before(async () => {
  service = await startTestApp();
  process.on('unhandledRejection', onUnhandled);
});

test.after(async () => {
  process.off('unhandledRejection', onUnhandled);
  await boss?.stop({ graceful: false, wait: true }).catch(() => {});
  await service?.close();
});

/** The service's own database, except that the next `failures` job completions are refused. */
function refusingCompletions(db: Db, failures: { left: number }): Db {
  return {
    ...db,
    executeSql: (text, values) => {
      if (/state = 'completed'/.test(text) && /UPDATE \w+\.job/.test(text) && failures.left > 0) {
        failures.left--;
        return Promise.reject(new Error('terminating connection due to administrator command'));
      }
      return db.executeSql(text, values);
    },
  };
}

async function jobState(id: string): Promise<string | undefined> {
  const [row] = await service.deps.db.query<{ state: string }>('SELECT state FROM pgboss.job WHERE id = $1', [id]);
  return row?.state;
}

test('a completion the database refuses is logged, does not crash, and leaves the job to expire and run again', async () => {
  const failures = { left: 1 };
  boss = await startQueue({ db: refusingCompletions(service.deps.db, failures), logger: service.deps.logger, supervise: false, queues: [] });
  await boss.createQueue(QUEUE, { name: QUEUE, expireInSeconds: 30 });
  const id = await boss.send(QUEUE, { n: 1 });
  assert.ok(id);

  let handled = 0;
  await boss.work(QUEUE, { pollingIntervalSeconds: 0.5 }, async () => {
    handled++;
  });
  await eventually('the completion was attempted', async () => failures.left === 0);
  await eventually('the refusal is logged', async () => service.logs.text().includes('could not record a job outcome'));

  // Node reports a rejection nobody handled once the microtasks of the turn it happened in have
  // run: by the next turn of the event loop, one from the refused completion would be reported.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(unhandled, []);
  assert.is(handled, 1);
  // Still active: pg-boss's expiry hands it out again; nothing marked it done or failed.
  assert.is(await jobState(id!), 'active');
});

test('after stop, a late outcome write answers "nothing affected" instead of reaching the pool', async () => {
  const late = await startQueue({ db: service.deps.db, logger: service.deps.logger, supervise: false, queues: [] });
  await late.createQueue(LATE_QUEUE, { name: LATE_QUEUE, expireInSeconds: 30 });
  const id = await late.send(LATE_QUEUE, { n: 2 });
  await late.stop({ graceful: false, wait: true });
  const result = await late.complete(LATE_QUEUE, id!);
  assert.equal(result, { jobs: [id], requested: 1, affected: 0 });
  assert.equal(unhandled, []);
  assert.is(await jobState(id!), 'created');
});

test.run();
