import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { build } from 'esbuild';
import { fasterTrpcSpread, MIDDLEWARE_CHAIN_MARKER, NATIVE_SPREADS, objectSpread2, TRPC_SPREAD_HELPER, withFasterSpread, withNativeSpreads } from '../gateway/src/fast-paths/trpc-spread.mjs';

// The build swaps tRPC's object-spread helper for a faster one, and writes the copies made on
// every call back as native spreads (gateway/src/fast-paths/trpc-spread.mjs). Here the installed tRPC still
// defines the helper and holds the copies the rewrites were made for, the two helpers give
// the same object wherever they could part, and a router answers the same built and not.

const test = suite('build: tRPC\'s object-spread helper, swapped for one with the same result');

const dist = join(dirname(createRequire(import.meta.url).resolve('@trpc/server')), '..', 'dist');
const definers = readdirSync(dist)
  .filter((name) => name.endsWith('.mjs'))
  .filter((name) => readFileSync(join(dist, name), 'utf8').includes('function _objectSpread2('));

type Spread = (target: object, ...sources: unknown[]) => object;

/** The installed helper with the helpers it calls, the regions of the compiler's runtime in that file. */
function installedHelper(): Spread {
  const source = readFileSync(join(dist, definers[0]), 'utf8');
  const runtime = [...source.matchAll(/\/\/#region \\0@oxc-project\+runtime@[^\n]*\n([\s\S]*?)\/\/#endregion/g)].map((match) => match[1]).join('\n');
  return new Function(`${runtime}\nreturn _objectSpread2;`)() as Spread;
}

test('the installed @trpc/server defines the helper once, as the build expects, and the build swaps it', () => {
  assert.equal(definers.length, 1, `files defining _objectSpread2: ${definers.join(', ')}`);
  const source = readFileSync(join(dist, definers[0]), 'utf8');
  assert.ok(source.includes(TRPC_SPREAD_HELPER), 'the helper text the build looks for (TRPC_SPREAD_HELPER) is what tRPC ships');
  const swapped = withFasterSpread(source);
  assert.ok(swapped && !swapped.includes(TRPC_SPREAD_HELPER) && swapped.includes('function _objectSpread2(target)'), 'the swap replaces it');
  assert.is(withFasterSpread('function _objectSpread2(e) { return e; }'), undefined, 'another helper is not swapped');
});

/** Everything observable of an object: its prototype and each own key's descriptor, in order. */
function described(object: object) {
  return { proto: Object.getPrototypeOf(object), keys: Reflect.ownKeys(object).map((key) => [key, Object.getOwnPropertyDescriptor(object, key)]) };
}

/** A case run on fresh inputs for each helper. */
type Case = { name: string; make: () => { target: object; sources: unknown[] } };

/** The accessors the helper called, per run. The accessors are the same functions in both runs. */
let read: string[] = [];
const spreadGetter = () => (read.push('spread'), 1);
const literalGetter = () => (read.push('literal'), 2);
const targetSetter = () => void read.push('setter');

const symbol = Symbol('kept');
const hidden = Symbol('hidden');
const getter = function (this: unknown) {
  return 'got';
};
const next = () => undefined;

const CASES: Case[] = [
  { name: 'the middleware call: options, then a literal part', make: () => ({ target: {}, sources: [{ ctx: { a: 1 }, path: 'auth.me', input: undefined }, {}, { meta: { m: 1 }, input: 2, next }] }) },
  { name: 'a spread onto a spread, keys overlapping', make: () => ({ target: { a: 1, b: 2 }, sources: [{ b: 3, c: 4 }] }) },
  { name: 'null and undefined sources', make: () => ({ target: { a: 1 }, sources: [null, undefined, { b: 2 }] }) },
  { name: 'a string source', make: () => ({ target: {}, sources: ['ab'] }) },
  {
    name: 'a getter in a spread source is read; in a literal part it is copied',
    make: () => {
      const source = Object.defineProperty({}, 'value', { get: spreadGetter, enumerable: true, configurable: true });
      const literal = Object.defineProperty({}, 'lazy', { get: literalGetter, enumerable: true, configurable: true });
      return { target: {}, sources: [source, literal] };
    },
  },
  {
    name: 'symbols: enumerable ones spread, all of a literal part copied',
    make: () => {
      const source = { [symbol]: 1 };
      Object.defineProperty(source, hidden, { value: 2, enumerable: false });
      const literal = { [symbol]: 3 };
      Object.defineProperty(literal, hidden, { value: 4, enumerable: false, writable: true, configurable: true });
      return { target: {}, sources: [source, literal] };
    },
  },
  { name: 'non-enumerable keys of a literal part are copied, of a spread source not', make: () => {
    const source = Object.defineProperty({ shown: 1 }, 'unshown', { value: 2, enumerable: false });
    const literal = Object.defineProperty({}, 'unlisted', { value: 3, enumerable: false, writable: false, configurable: true });
    return { target: {}, sources: [source, literal] };
  } },
  { name: 'an own __proto__ key (as JSON.parse makes) stays a key, not a prototype', make: () => ({ target: {}, sources: [JSON.parse('{"__proto__": {"polluted": true}, "x": 1}'), {}, JSON.parse('{"__proto__": 5}')] }) },
  { name: 'keys the target inherits (toString, constructor)', make: () => ({ target: {}, sources: [{ toString: 'own', constructor: 1 }] }) },
  {
    name: 'a target with a setter and a read-only key',
    make: () => {
      const target = {};
      Object.defineProperty(target, 'guarded', { set: targetSetter, get: getter, enumerable: true, configurable: true });
      Object.defineProperty(target, 'fixed', { value: 1, writable: false, enumerable: true, configurable: true });
      return { target, sources: [{ guarded: 'assigned', fixed: 2 }, {}, { guarded: 'literal' }] };
    },
  },
  { name: 'a target without a prototype', make: () => ({ target: Object.create(null), sources: [{ a: 1 }, {}, { b: 2 }] }) },
];

test('the swapped helper gives the same object as tRPC\'s in every case', () => {
  const installed = installedHelper();
  for (const { name, make } of CASES) {
    const outcome = (spread: Spread) => {
      read = [];
      const { target, sources } = make();
      const result = spread(target, ...sources);
      assert.is(result, target, `${name}: the target itself is returned`);
      return { ...described(result), read };
    };
    assert.equal(outcome(objectSpread2 as Spread), outcome(installed), name);
  }
});

test('a key the target holds read-only and not configurable fails alike', () => {
  const installed = installedHelper();
  const failure = (spread: Spread) => {
    try {
      spread(Object.defineProperty({}, 'locked', { value: 1, enumerable: true }), { locked: 2 });
      return 'no error';
    } catch (error) {
      return (error as Error).constructor.name;
    }
  };
  assert.is(failure(objectSpread2 as Spread), failure(installed));
  assert.is(failure(installed), 'TypeError');
});

test('the installed tRPC holds each copy the build writes natively exactly once, in the middleware chain\'s file', () => {
  const chains = readdirSync(dist)
    .filter((name) => name.endsWith('.mjs'))
    .filter((name) => readFileSync(join(dist, name), 'utf8').includes(MIDDLEWARE_CHAIN_MARKER));
  assert.equal(chains.length, 1, `files with the middleware chain: ${chains.join(', ')}`);
  const source = readFileSync(join(dist, chains[0]), 'utf8');
  for (const { name, compiled } of NATIVE_SPREADS) assert.is(source.split(compiled).length, 2, `${name}: found once`);
  const rewritten = withNativeSpreads(source)!;
  assert.ok(rewritten, 'rewritten');
  for (const { name, compiled, native } of NATIVE_SPREADS) assert.ok(!rewritten.includes(compiled) && rewritten.includes(native), name);
  assert.is(withNativeSpreads(source.replace(NATIVE_SPREADS[1].compiled, '')), undefined, 'a text not found fails the rewrite');
});

/**
 * A router whose calls go through every rewritten copy: middlewares that add to the context
 * (a getter among it) and replace the input, an object input merged with a second parser's,
 * an output parser, and a failing middleware. Run as the installed tRPC runs it, and bundled
 * with the plugin as the build bundles the service.
 */
const ROUTER_SOURCE = `
import { initTRPC, TRPCError } from '@trpc/server';
const t = initTRPC.context().create();
const withUser = t.middleware(({ ctx, next }) => next({ ctx: { user: 'ada', get lazy() { return ctx.base + '!'; } } }));
const pick = (raw) => ({ a: raw.a });
const addB = (raw) => ({ b: String(raw.b) });
const router = t.router({
  seen: t.procedure.use(withUser).input(pick).input(addB).output((value) => ({ ...value, checked: true }))
    .query(({ ctx, input, path, type }) => ({ keys: Object.keys(ctx).sort(), lazy: ctx.lazy, input, path, type })),
  replaced: t.procedure.use(({ next }) => next({ input: { swapped: 1 } })).query(({ input }) => ({ input })),
  refused: t.procedure.use(() => { throw new TRPCError({ code: 'FORBIDDEN', message: 'no' }); }).query(() => 'never'),
});
export async function run() {
  const caller = t.createCallerFactory(router)({ base: 'b', keep: 1 });
  const refused = await caller.refused().then(() => 'answered', (error) => error.code + ' ' + error.message);
  return [await caller.seen({ a: 1, b: 2, c: 3 }), await caller.replaced(), refused];
}
`;

test('a router built with the plugin answers as the installed tRPC does, through every rewritten copy', async () => {
  // Files inside the repository, so that the unbundled one finds @trpc/server in node_modules.
  mkdirSync(join(process.cwd(), 'node_modules', '.cache'), { recursive: true });
  const dir = mkdtempSync(join(process.cwd(), 'node_modules', '.cache', 'trpc-spread-'));
  try {
    const run = async (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return (await import(pathToFileURL(join(dir, name)).href)).run();
    };
    const built = await build({
      stdin: { contents: ROUTER_SOURCE, resolveDir: dir, loader: 'js' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      plugins: [fasterTrpcSpread()],
      logLevel: 'silent',
    });
    const bundled = built.outputFiles[0].text;
    const chain = bundled.slice(bundled.indexOf('async function callRecursive('), bundled.indexOf('function createProcedureCaller('));
    assert.ok(chain.includes('...opts') && !chain.includes('_objectSpread2'), 'the bundle has the chain written natively');
    const expected = [
      { keys: ['base', 'keep', 'lazy', 'user'], lazy: 'b!', input: { a: 1, b: '2' }, path: 'seen', type: 'query', checked: true },
      { input: { swapped: 1 } },
      'FORBIDDEN no',
    ];
    assert.equal(await run('installed.mjs', ROUTER_SOURCE), expected, 'the installed tRPC');
    assert.equal(await run('built.mjs', bundled), expected, 'the bundle');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The middleware chain's copy of its options as tRPC's compiler wrote it (the bundle drops the spaces and the empty `{}`). */
const COMPILED_CHAIN = /_objectSpread2\(_objectSpread2\(\{\},\s*opts\),\s*(?:\{\},\s*)?\{\s*meta:\s*_def\.meta/;

/** The text of every chunk `npm run build` writes with FAST_PATHS set to `fastPaths`, or its failure. */
function buildWith(fastPaths: string): { status: number | null; stderr: string; code: string } {
  mkdirSync(join(process.cwd(), '.build'), { recursive: true });
  const dir = mkdtempSync(join(process.cwd(), '.build', 'fast-paths-'));
  try {
    const built = spawnSync(process.execPath, ['build.mjs', `--outdir=${dir}`], { env: { ...process.env, FAST_PATHS: fastPaths }, encoding: 'utf8' });
    const code = built.status === 0 ? readdirSync(dir).filter((name) => name.endsWith('.js')).map((name) => readFileSync(join(dir, name), 'utf8')).join('\n') : '';
    return { status: built.status, stderr: built.stderr, code };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('npm run build both ways: FAST_PATHS=on rewrites tRPC, off leaves it as installed, anything else is refused', () => {
  const on = buildWith('on');
  assert.is(on.status, 0, on.stderr);
  assert.ok(on.code.includes('function spreadCopyProperty('), 'on: the faster helper is in the bundle');
  assert.not.ok(COMPILED_CHAIN.test(on.code), 'on: the middleware chain is written natively');
  const off = buildWith('off');
  assert.is(off.status, 0, off.stderr);
  assert.not.ok(off.code.includes('function spreadCopyProperty('), "off: tRPC's own helper");
  assert.ok(COMPILED_CHAIN.test(off.code), "off: the middleware chain as tRPC's bundle has it");
  const wrong = buildWith('fast');
  assert.is.not(wrong.status, 0);
  assert.ok(wrong.stderr.includes('FAST_PATHS must be on or off'), wrong.stderr);
});

test.run();
