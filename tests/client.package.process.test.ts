import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { registerAndVerify } from './helpers/auth.ts';
import { startTestService } from './helpers/service.ts';

// The typed client as a frontend in another repository gets it: built, packed, installed
// from the tarball without the network into a project with a Vite-style tsconfig, checked
// there by the compiler, and run with Node against a real service. Each step uses what the
// one before it made: a test asks for the step it needs (stages below), which runs the steps
// before it if no other test has, so any test may come first.

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const test = suite('client package: built, packed, installed and type-checked by a frontend');
/** The suite's temporary directory, and the frontend project in it. */
let dir: string;
let app: string;

type Run = { code: number | null; stdout: string; stderr: string };

/** A command run without a shell, asynchronously, so an in-process service can answer it. */
function run(command: string, args: string[], cwd: string): Promise<Run> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function succeed(command: string, args: string[], cwd: string): Promise<Run> {
  const result = await run(command, args, cwd);
  assert.is(result.code, 0, `${command} ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** The root's compiler, as `npx tsc` in the repository runs it. */
const typecheck = (app: string, ...args: string[]) => run(process.execPath, [tsc, ...args], app);

/** Every module a file names: static imports and exports, and import("…") types. */
function specifiersIn(text: string): string[] {
  return [...text.matchAll(/\bfrom ['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1] ?? match[2]);
}

// What Vite's templates set, with the strictness a library must survive: the libraries'
// own declarations are checked too. ESNext.Disposable is there because @trpc/server's
// declarations name Disposable, which ES2022's lib does not have.
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'bundler',
    lib: ['ES2022', 'DOM', 'DOM.Iterable', 'ESNext.Disposable'],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    types: [],
  },
  include: ['src'],
};

const MAIN_TS = `import { isTRPCClientError } from '@trpc/client';
import { createGatehouseClient, type AppRouter, type RouterInputs, type RouterOutputs, type TRPCClientError } from '@gatehouse/client';

type Email = RouterOutputs['auth']['me']['user']['email'];
type AppCode = NonNullable<TRPCClientError<AppRouter>['data']>['appCode'];

export const registration: RouterInputs['auth']['register'] = { email: 'ada@example.com', password: 'correct horse', name: 'Ada' };

/** The signed-in account's address, and the code the service gives a caller without a token. */
export async function whoAmI(url: string, token: string): Promise<{ email: Email; anonymous: AppCode | undefined }> {
  const client = createGatehouseClient({ url, token: () => token });
  const { user } = await client.auth.me.query();
  let anonymous: AppCode | undefined;
  try {
    await createGatehouseClient({ url }).auth.me.query();
  } catch (error) {
    if (isTRPCClientError<AppRouter>(error)) anonymous = error.data?.appCode;
  }
  return { email: user.email, anonymous };
}

/** The README's setup for the svc_token cookie, from a frontend on the same site. */
export const withCookie = (url: string) => createGatehouseClient({ url, fetch: (input, init) => fetch(input, { ...init, credentials: 'include' }) });
`;

// Each line marked "expect" must fail with that code and message, and nothing else may fail:
// with types that were `any`, none of these would.
const WRONG_TS = `import { isTRPCClientError } from '@trpc/client';
import { createGatehouseClient, type AppRouter, type RouterInputs, type RouterOutputs } from '@gatehouse/client';

const client = createGatehouseClient({ url: 'http://127.0.0.1/trpc' });

export async function misuse(error: unknown): Promise<void> {
  const { user } = await client.auth.me.query();
  const id: string = user.id; // expect TS2322 Type 'number' is not assignable to type 'string'.
  const typo: RouterOutputs['auth']['me']['user']['emial'] = ''; // expect TS2339 Property 'emial' does not exist
  const login: RouterInputs['auth']['login'] = { email: 'ada@example.com' }; // expect TS2741 Property 'password' is missing
  await client.auth.register.mutate({ email: 'ada@example.com', password: 'x', name: 'Ada', plan: 'pro' }); // expect TS2353 'plan' does not exist
  await client.auth.noSuchProcedure.query(); // expect TS2339 Property 'noSuchProcedure' does not exist
  await client.auth.me.mutate(); // expect TS2339 Property 'mutate' does not exist
  if (isTRPCClientError<AppRouter>(error) && error.data?.appCode === 'NOT_A_CODE') return; // expect TS2367 '"NOT_A_CODE"' have no overlap
  console.log(id, typo, login);
}
`;

// Runs the compiled main.ts as a page's script would run it, with the service's address.
const RUN_MJS = `const { whoAmI } = await import('./build/main.js');
console.log(JSON.stringify(await whoAmI(process.argv[2], process.argv[3])));
`;

/**
 * The files of client/README.md's complete example, each the code block after its
 * `<!-- example: name -->` line, so the README is checked as a frontend would copy it.
 */
function readmeExamples(): Record<string, string> {
  const readme = readFileSync(join(root, 'client/README.md'), 'utf8');
  const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n```\w*\n([\s\S]*?)```/g)];
  return Object.fromEntries(blocks.map((match) => [match[1], match[2]]));
}

const README = readmeExamples();
/** Where the README's src/main.ts goes in the test project, beside the project's own main.ts. */
const README_MAIN = 'src/readme-example.ts';
/** The service address the README's example calls; the test points it at its own service. */
const README_URL = "'http://localhost:3000/trpc'";

test.before(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'gatehouse-client-package-')));
  app = join(dir, 'frontend');
});
test.after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `work` once, for whichever test asks first; every later caller gets the same result. */
function once<T>(work: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => (result ??= work());
}

type Packed = { tarball: string; files: string[]; name: string; version: string };

const built = once(() => succeed('npm', ['run', 'build:client'], root));

const packed = once(async (): Promise<Packed> => {
  await built();
  const result = await succeed('npm', ['pack', './client', '--ignore-scripts', '--json', '--pack-destination', dir], root);
  const [info] = JSON.parse(result.stdout);
  return { tarball: join(dir, info.filename), files: info.files.map((file: { path: string }) => file.path).sort(), name: info.name, version: info.version };
});

/** The frontend project, written and installed from the tarball. */
const installed = once(async () => {
  const { tarball } = await packed();
  // The peers come packed from the repository's own node_modules: copies, not links, so the
  // frontend type-checks files inside itself, as it would after a registry install.
  const peers = await succeed(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', dir, join(root, 'node_modules/@trpc/client'), join(root, 'node_modules/@trpc/server')],
    root,
  );
  const peerTarballs = JSON.parse(peers.stdout).map((info: { filename: string }) => join(dir, info.filename));
  mkdirSync(join(app, 'src'), { recursive: true });
  mkdirSync(join(app, 'wrong'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'frontend', private: true, type: 'module' }));
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  writeFileSync(join(app, 'tsconfig.wrong.json'), JSON.stringify({ extends: './tsconfig.json', include: ['wrong'] }));
  writeFileSync(join(app, 'src/main.ts'), MAIN_TS);
  writeFileSync(join(app, README_MAIN), README['src/main.ts']);
  writeFileSync(join(app, 'wrong/wrong.ts'), WRONG_TS);
  writeFileSync(join(app, 'run.mjs'), RUN_MJS);

  // --legacy-peer-deps: npm would otherwise fetch the peers' own peer, typescript.
  const cache = join(dir, 'npm-cache');
  await succeed('npm', ['install', '--offline', '--no-audit', '--no-fund', '--legacy-peer-deps', '--cache', cache, tarball, ...peerTarballs], app);
});

/** The frontend's sources compiled to JavaScript in build/. */
const compiled = once(async () => {
  await installed();
  await succeed(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit', 'false', '--rootDir', 'src', '--outDir', 'build'], app);
});

test('npm run build:client emits index.js and one index.d.ts that name nothing but @trpc/*', async () => {
  await built();
  const declarations = readFileSync(join(root, 'client/dist/index.d.ts'), 'utf8');
  const script = readFileSync(join(root, 'client/dist/index.js'), 'utf8');
  assert.equal([...new Set(specifiersIn(declarations))].sort(), ['@trpc/client', '@trpc/server']);
  assert.equal(specifiersIn(script), ['@trpc/client']);
  for (const name of ['AppRouter', 'RouterInputs', 'RouterOutputs', 'GatehouseClientOptions', 'GatehouseClient', 'TRPCClientError']) {
    assert.match(declarations, new RegExp(`export (type )?\\{ ${name} \\}|export (type|declare function) ${name}\\b`), `${name} is exported`);
  }
  assert.match(script, /export function createGatehouseClient\(/);
});

test('npm pack ./client holds the build, a README and package.json, at the root version', async () => {
  const info = await packed();
  assert.equal(info.files, ['README.md', 'dist/index.d.ts', 'dist/index.js', 'package.json']);
  assert.is(info.name, '@gatehouse/client');
  assert.is(info.version, rootPackage.version);
  const manifest = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8'));
  // The ranges the service itself is built and tested with (the server needs @trpc/server
  // at run time; @trpc/client only its tests).
  const declared = { ...rootPackage.devDependencies, ...rootPackage.dependencies };
  assert.equal(manifest.peerDependencies, { '@trpc/client': declared['@trpc/client'], '@trpc/server': declared['@trpc/server'] });
  assert.ok(declared['@trpc/client'] && declared['@trpc/server']);
  assert.is(manifest.dependencies, undefined);
});

test("the README's package.json and tsconfig.json are this project's, and name the tarball npm pack wrote", async () => {
  const { tarball } = await packed();
  assert.equal(Object.keys(README).sort(), ['output', 'package.json', 'src/main.ts', 'tsconfig.json']);
  assert.equal(JSON.parse(README['tsconfig.json']), TSCONFIG);
  const manifest = JSON.parse(README['package.json']);
  const peers = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8')).peerDependencies;
  assert.is(manifest.type, 'module');
  assert.equal(manifest.dependencies, { '@gatehouse/client': `file:../gatehouse/${basename(tarball)}`, ...peers });
  const readme = readFileSync(join(root, 'client/README.md'), 'utf8');
  const install = `npm install ../gatehouse/${basename(tarball)} @trpc/client@${peers['@trpc/client']} @trpc/server@${peers['@trpc/server']}`;
  assert.ok(readme.includes(install), `the README's install line is: ${install}`);
  assert.ok(README['src/main.ts'].includes(README_URL), `the README's example calls ${README_URL}`);
});

test('the tarball installs into a frontend project with no network and a cold npm cache', async () => {
  await installed();
  for (const name of ['@gatehouse/client', '@trpc/client', '@trpc/server']) {
    const location = join(app, 'node_modules', name);
    assert.ok(lstatSync(location).isDirectory(), `${name} is a real directory, not a link`);
  }
  for (const file of ['dist/index.d.ts', 'dist/index.js']) {
    assert.is(readFileSync(join(app, 'node_modules/@gatehouse/client', file), 'utf8'), readFileSync(join(root, 'client', file), 'utf8'), file);
  }
});

test('a Vite-style project type-checks against it, reading nothing but its own files, the package and @trpc', async () => {
  await installed();
  const checked = await typecheck(app, '-p', 'tsconfig.json');
  assert.is(checked.code, 0, checked.stdout + checked.stderr);
  assert.is(checked.stdout, '');

  const listed = await typecheck(app, '-p', 'tsconfig.json', '--listFilesOnly');
  assert.is(listed.code, 0, listed.stderr);
  const files = listed.stdout.split('\n').filter(Boolean);
  // The compiler's own lib files (ES2022, DOM) sit with the compiler, outside the project.
  const libDir = dirname(files.find((file) => basename(file) === 'lib.es5.d.ts') ?? '');
  const isCompilerLib = (file: string) => dirname(file) === libDir && /^lib\.[\w.]+\.d\.ts$/.test(basename(file));
  const fromProject = files.filter((file) => !isCompilerLib(file)).map((file) => relative(app, file));
  const allowed = (file: string) => /^(src\/|node_modules\/@gatehouse\/client\/|node_modules\/@trpc\/(client|server)\/)/.test(file);
  assert.equal(fromProject.filter((file) => !allowed(file)), []);
  assert.ok(!relative(app, libDir).startsWith('node_modules'), 'lib files are the compiler\'s, not a package\'s');
  assert.equal(fromProject.filter((file) => file.startsWith('node_modules/@gatehouse/')), ['node_modules/@gatehouse/client/dist/index.d.ts']);
  assert.ok(fromProject.includes('src/main.ts'));
  assert.ok(fromProject.includes(README_MAIN), "the README's example is checked too");
});

test('wrong uses of the types fail the type check, each with the error expected', async () => {
  await installed();
  const checked = await typecheck(app, '-p', 'tsconfig.wrong.json', '--pretty', 'false');
  assert.is.not(checked.code, 0, 'the type check fails');
  const expected = WRONG_TS.split('\n').flatMap((line, index) => {
    const match = /\/\/ expect (TS\d+) (.+)$/.exec(line);
    return match ? [{ line: index + 1, code: match[1], message: match[2] }] : [];
  });
  const errors = checked.stdout.split('\n').filter((line) => line.includes(': error TS'));
  assert.is(errors.length, expected.length, checked.stdout);
  for (const { line, code, message } of expected) {
    const found = errors.find((error) => error.startsWith(`wrong/wrong.ts(${line},`) && error.includes(`error ${code}:`));
    assert.ok(found, `line ${line}: expected ${code}, got:\n${checked.stdout}`);
    assert.ok(found!.includes(message), `line ${line}: "${message}" not in: ${found}`);
  }
});

test('the built JavaScript, run by Node from the frontend, answers auth.me with the account', async () => {
  await compiled();
  const service = await startTestService();
  try {
    const account = await registerAndVerify(service, 'package.client@example.com');
    const result = await succeed(process.execPath, ['run.mjs', `${service.url}/trpc`, account.token], app);
    assert.equal(JSON.parse(result.stdout), { email: 'package.client@example.com', anonymous: 'UNAUTHORIZED' });
  } finally {
    await service.close();
  }
});

test("the README's example, built with the frontend's sources, logs in, reads auth.me and prints the refusal as the README says", async () => {
  await compiled();
  const login = /email: '([^']+)',\s*password: '([^']+)'/.exec(README['src/main.ts']);
  assert.ok(login, "the README's example logs in with an e-mail and a password");
  const built = readFileSync(join(app, 'build/readme-example.js'), 'utf8');
  const service = await startTestService();
  try {
    await registerAndVerify(service, login![1], { password: login![2] });
    writeFileSync(join(app, 'build/readme-example.run.js'), built.replace(README_URL, JSON.stringify(`${service.url}/trpc`)));
    const result = await succeed(process.execPath, ['build/readme-example.run.js'], app);
    assert.is(result.stdout, README.output);
  } finally {
    await service.close();
  }
});

test.run();
