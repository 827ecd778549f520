import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, registerAndVerify } from './helpers/auth.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

// Stopping the service closes the server, which waits for connections, not for handlers: a
// request whose client hung up is still being handled after its socket is gone. The
// database must stay open until that handler is done, or its work is cut off halfway.

type Context = { service: TestService; database: pg.Client; lockHolder: pg.Client };
const test = suite<Context>('draining: requests whose clients hung up');

// Holding a table lock in a second connection needs a database server: the embedded
// database serves one connection at a time.
if (process.env.DATABASE_URL) {
  test.before(async (context) => {
    context.service = await startTestService();
    context.database = new pg.Client({ connectionString: context.service.env.DATABASE_URL });
    context.lockHolder = new pg.Client({ connectionString: context.service.env.DATABASE_URL });
    await Promise.all([context.database.connect(), context.lockHolder.connect()]);
  });
  test.after(async ({ service, database, lockHolder }) => {
    await lockHolder?.end();
    await database?.end();
    await service?.close();
  });

  test('stop waits for a login whose client left, and the login completes before the database closes', async ({ service, database, lockHolder }) => {
    const account = await registerAndVerify(service, 'hung-up@example.com');
    const sessionsBefore = await sessionCount(database, account.user.id);

    // The login's session insert waits on this lock for as long as the test holds it.
    await lockHolder.query('BEGIN');
    await lockHolder.query('LOCK TABLE sessions IN SHARE MODE');
    const body = JSON.stringify({ email: account.email, password: PASSWORD });
    const login = httpRequest(`${service.url}${AUTH}/login`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } });
    login.on('error', () => {});
    login.end(body);
    await eventually(
      'the login to wait on the lock',
      async () =>
        (await database.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO sessions%'`)).rowCount,
    );

    login.destroy();
    const stopped = service.stop();
    await eventually('the service to say it waits for the request', () => service.logs.text().includes('waiting for requests whose clients hung up'));
    await lockHolder.query('COMMIT');
    await stopped;

    assert.is(await sessionCount(database, account.user.id), sessionsBefore + 1, 'the login made its session');
    const succeeded = await database.query(`SELECT count(*)::int AS n FROM audit_events WHERE account_id = $1 AND event = 'login.succeeded'`, [account.user.id]);
    assert.is(succeeded.rows[0].n, 2, 'and recorded its event');
    const errors = service.logs.lines.filter((line) => JSON.parse(line).level === 'error');
    assert.equal(errors, [], 'nothing failed on the way down');
  });
}

async function sessionCount(database: pg.Client, accountId: number): Promise<number> {
  const { rows } = await database.query('SELECT count(*)::int AS n FROM sessions WHERE account_id = $1', [accountId]);
  return rows[0].n;
}

test.run();
