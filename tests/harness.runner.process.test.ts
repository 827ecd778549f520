import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

// The test runner's own checks (tests/run.mjs), each run on files made for it, as the runner
// runs files: in child processes, which is the point.

// uvu drops an error a suite's `before` hook throws; tests/run.mjs loads uvu-loud-hooks.mjs
// so that every test file's uvu prints it. Here a file whose `before` throws is run as the
// runner runs files: with the hooks, as TEST_ORDER=reverse adds its own, and without.

const hooks = suite('the test harness: an error a before hook throws is printed');

const root = fileURLToPath(new URL('..', import.meta.url));
const MARKER = 'the-service-could-not-start-7f3a';

function runThrowingSuite(imports: string[]): string {
  // Inside the repository, so that 'uvu' resolves from its node_modules.
  const dir = join(root, '.build', `uvu-hooks-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'throwing.test.ts');
  writeFileSync(
    file,
    `import { suite } from 'uvu';
const test = suite('a suite that cannot start');
test.before(async () => { throw new Error('${MARKER}'); });
test('never runs', () => {});
test.run();
`,
  );
  try {
    const ran = spawnSync(process.execPath, ['--import', 'tsx', ...imports.flatMap((hook) => ['--import', hook]), file], { cwd: root, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
    return `${ran.stdout}${ran.stderr}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

hooks("uvu alone drops the hook's error: the file shows its tests not run, and no reason", () => {
  const output = runThrowingSuite([]);
  assert.match(output, /Passed:\s+0/);
  assert.not.match(output, new RegExp(MARKER));
});

hooks('with the hooks the runner loads, the error and its suite are printed', () => {
  const output = runThrowingSuite(['./tests/helpers/uvu-loud-hooks.mjs']);
  assert.match(output, `the before hook of "a suite that cannot start" threw, so none of its tests ran:\nError: ${MARKER}`);
});

hooks('and in reverse order (TEST_ORDER=reverse) as well', () => {
  const output = runThrowingSuite(['./tests/helpers/reverse-order.mjs', './tests/helpers/uvu-loud-hooks.mjs']);
  assert.match(output, `Error: ${MARKER}`);
});

hooks.run();

// tests/run.mjs checks after each file that it left no process, no listening port and no
// scratch entry behind, fails the run naming the file, and clears them away. Here the runner
// runs a directory of fixture files, one of each kind of leak and a last one that checks that
// what the others left is gone.

const leaks = suite('the test harness: a file that leaves something behind fails the run');

/**
 * The runner takes the files it guesses longest first, and guesses by size: the padding puts
 * the leaking files before the one that checks on them.
 */
const PADDING = `// ${'padding '.repeat(600)}\n`;

const FIXTURES: Record<string, string> = {
  'leaks-a-process.test.ts': `import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { test } from 'uvu';
${PADDING}
test('starts a process and leaves it running', () => {
  const child = spawn('sleep', ['300'], { stdio: 'ignore' });
  writeFileSync(new URL('./notes/process', import.meta.url), String(child.pid));
});
test.run();
`,
  'leaks-b-port.test.ts': `import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { test } from 'uvu';
${PADDING}
test('listens and never closes', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  writeFileSync(new URL('./notes/port', import.meta.url), String((server.address() as AddressInfo).port));
});
test.run();
`,
  'leaks-c-folder.test.ts': `import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
${PADDING}
test('makes a scratch folder and leaves it', () => {
  writeFileSync(new URL('./notes/folder', import.meta.url), mkdtempSync(join(tmpdir(), 'left-behind-')));
});
test.run();
`,
  'leaks-d-after.test.ts': `import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
const note = (name: string) => readFileSync(new URL(\`./notes/\${name}\`, import.meta.url), 'utf8');
test('what the earlier files left is gone', async () => {
  // Killed, or a zombie its parent has not reaped yet: either way it runs no more.
  let state = 'gone';
  try { state = readFileSync(\`/proc/\${note('process')}/stat\`, 'utf8').split(') ')[1][0]; } catch {}
  assert.ok(state === 'gone' || state === 'Z', \`the process is in state \${state}\`);
  const refused = await new Promise((resolve) => {
    const socket = connect(Number(note('port')), '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(true));
  });
  assert.ok(refused, 'nothing listens on the port');
  assert.not.ok(existsSync(note('folder')), 'the folder is removed');
});
test.run();
`,
};

async function runFixtures(dir: string): Promise<{ code: number | null; output: string }> {
  const env: Record<string, string> = {};
  // The outer run's settings for its own test processes are not the inner run's.
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('GATEHOUSE_TEST_')) env[name] = value;
  const child = spawn(process.execPath, ['tests/run.mjs'], {
    cwd: root,
    env: { ...env, GATEHOUSE_TEST_DIR: dir, TEST_CONCURRENCY: '1', TEST_LEAK_GRACE_MS: '1000', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  try {
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    return { code, output };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

leaks('a process, a port and a folder left behind each fail their file by name; the runner clears them before the next file', async () => {
  // Inside the repository, so that 'uvu' resolves from its node_modules.
  const dir = join(root, '.build', `leaks-${process.pid}`);
  mkdirSync(join(dir, 'notes'), { recursive: true });
  try {
    for (const [name, text] of Object.entries(FIXTURES)) writeFileSync(join(dir, name), text);
    const { code, output } = await runFixtures(dir);
    const name = (file: string) => join('.build', `leaks-${process.pid}`, file);
    const note = (which: string) => readFileSync(join(dir, 'notes', which), 'utf8');
    assert.match(output, `FAIL ${name('leaks-a-process.test.ts')}  (1 passed, 1 failed`);
    assert.match(output, `a process still running: ${note('process')} sleep 300`);
    assert.match(output, `FAIL ${name('leaks-b-port.test.ts')}  (1 passed, 1 failed`);
    assert.match(output, `a port still listening in the test process: ${note('port')}`);
    assert.match(output, `FAIL ${name('leaks-c-folder.test.ts')}  (1 passed, 1 failed`);
    assert.match(output, `a scratch entry left in TMPDIR: ${note('folder').split('/').pop()}`);
    assert.match(output, `ok   ${name('leaks-d-after.test.ts')}  (1 passed, 0 failed`);
    assert.match(output, /\n4 passed, 3 failed\n/);
    assert.is(code, 1, output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

leaks.run();

// Whole services on a port and child processes stay where the socket or the process is the
// point (README, Tests): the rest reach the service in process. A file counts when it starts
// a service on a port (startTestService), spawns anything itself (a tool: knip, promtool,
// mkfifo), or uses the helpers that start the service's process or Chromium.
const shape = suite('the suite: a port or a child process in at most 20 files');

const STARTS_A_PORT_OR_PROCESS = [/\bstartTestService\(/, /from 'node:child_process'/, /from '\.\/helpers\/process\.ts'/, /from '\.\/helpers\/browser\.ts'/];

shape('at most 20 test files start a service on a port or a child process', () => {
  const dir = join(root, 'tests');
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.test.ts'))
    .filter((name) => STARTS_A_PORT_OR_PROCESS.some((pattern) => pattern.test(readFileSync(join(dir, name), 'utf8'))));
  assert.ok(files.includes('harness.runner.process.test.ts'), 'the check sees this file, which spawns the runner');
  assert.ok(files.includes('pages.mfa.browser.test.ts'), 'and a browser file');
  assert.ok(files.length <= 20, `${files.length} files:\n${files.join('\n')}`);
});

shape.run();
