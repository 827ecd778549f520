import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { login, me, registerAndVerify, type Account } from './helpers/auth.ts';
import { root } from './helpers/import-graph.ts';
import { startTestApp, type TestService } from './helpers/service.ts';

// How many of the project's files a request runs through, from the gateway to the database
// and back: what a newcomer who traces it by hand has to open. Measured, not counted by
// reading: V8's precise coverage (call counts per function, as `node --experimental-test-coverage`
// and c8 read it) is reset before one request and read after it; a file counts when any of
// its functions ran. The gateway alone is started (no worker), so no timer of the worker's
// runs in the window. Each ceiling is today's count: a change that makes a trace longer fails
// here and names the files, so that it is a choice, not a drift. The first run of each kind of
// request is left out: it loads what every later one shares.

type Context = { service: TestService; account: Account; session: Session };
const test = suite<Context>('architecture: the files a request runs through');

/**
 * Today's counts (2026-12-03: a login 31; /me 18 from the credentials cache, 22 through the
 * database, as on the embedded one, which has no cache), with one to spare for a timer of the
 * gateway's (the sessions' touch writer, say) that fires in the window. The target is
 * 15 for a login (docs/ARCHITECTURE.md, How long a trace is). Lower these as
 * the traces get shorter.
 */
const CEILINGS = { login: 32, me: 23 };

test.before(async (context) => {
  context.service = await startTestApp({}, { role: 'gateway' });
  context.account = await registerAndVerify(context.service, 'traced@example.com');
  context.session = new Session();
  context.session.connect();
  await context.session.post('Profiler.enable');
  await context.session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
});
test.after(async ({ service, session }) => {
  await session?.post('Profiler.stopPreciseCoverage').catch(() => undefined);
  session?.disconnect();
  await service?.close();
});

/** The project's source files (no test, no dependency) that ran while `work` did. */
async function filesRunBy(session: Session, work: () => Promise<unknown>): Promise<string[]> {
  // Taking the coverage resets its counts: what the next take sees ran after this one.
  await session.post('Profiler.takePreciseCoverage');
  await work();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  return result
    .filter((script) => script.url.startsWith('file://') && !script.url.includes('/node_modules/'))
    .filter((script) => script.functions.some((fn) => (fn.ranges[0]?.count ?? 0) > 0))
    .map((script) => relative(root, fileURLToPath(script.url)))
    .filter((file) => /^(gateway|server)\/src\//.test(file))
    .sort();
}

test('a REST login, from the request to the database and back', async ({ service, account, session }) => {
  await login(service, account.email);
  const files = await filesRunBy(session, async () => assert.is((await login(service, account.email)).status, 200));
  assert.ok(files.some((file) => file.startsWith('server/src/modules/sessions/')), files.join('\n'));
  assert.ok(files.length <= CEILINGS.login, `${files.length} files, ceiling ${CEILINGS.login}:\n${files.join('\n')}`);
});

/** The files docs/ARCHITECTURE.md ("Reading a login") tells a newcomer to open, in its order. */
function readingPath(): string[] {
  const page = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8');
  const list = /<!-- reading path: a REST login -->\n([\s\S]*?)<!-- end of the reading path -->/.exec(page)?.[1] ?? '';
  return [...list.matchAll(/^\d+\. `([^`]+)`/gm)].map((match) => match[1]);
}

test("a REST login's reading path: at most 15 files, each of them run by a login", async ({ service, account, session }) => {
  const path = readingPath();
  assert.ok(path.length >= 5, `the list read: ${path.join(', ')}`);
  assert.ok(path.length <= 15, `${path.length} files to read`);
  assert.equal(path.filter((file, index) => path.indexOf(file) !== index), [], 'a file listed twice');
  const ran = await filesRunBy(session, async () => assert.is((await login(service, account.email)).status, 200));
  assert.equal(path.filter((file) => !ran.includes(file)), [], `listed, but a login does not run them; it runs:\n${ran.join('\n')}`);
});

test('GET /auth/me with an API key', async ({ service, account, session }) => {
  const headers = { authorization: `Bearer ${account.apiKey}` };
  await me(service, headers);
  const files = await filesRunBy(session, async () => assert.is((await me(service, headers)).status, 200));
  assert.ok(files.includes('gateway/src/fast-paths/openapi-handler.ts'), files.join('\n'));
  assert.ok(files.length <= CEILINGS.me, `${files.length} files, ceiling ${CEILINGS.me}:\n${files.join('\n')}`);
});

test.run();
