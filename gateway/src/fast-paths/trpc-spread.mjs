// A fast path (see index.ts in this folder), and a build step for `npm run build` (build.mjs): tRPC's bundle copies objects with the
// `_objectSpread2` helper its compiler adds for `{ ...a, b }`, twice at every middleware
// level of every call (the call's options, then the options for `next`). That helper reads
// each key through `ownKeys`, a `forEach` closure and `toPropertyKey`, and copies the literal
// part of each spread with `Object.defineProperties(Object.getOwnPropertyDescriptors(…))`.
// A profile of `/me` by API key put 12% of the service's CPU in it (15% with what it calls).
//
// The build swaps it for `objectSpread2` below, which gives the same object: the same own
// properties in the same order, with the same descriptors, the same prototype, and the same
// getters read. It assigns where an assignment makes exactly the property `defineProperty`
// would (a plain data property, onto a key the target lacks or holds as plain data), and
// defines otherwise. (A Proxy among the objects would see its traps called in another way;
// the contexts, inputs and options this service hands tRPC are plain objects.)
// tests/build.trpc-spread.unit.test.ts compares the two on the cases where they could part
// (accessors, `__proto__`, symbols, keys the target inherits) and fails when an upgrade of
// tRPC changes the helper, so that the swap is looked at again, not lost.
//
// The copies made on every call of a procedure (the middleware chain's, the input's and the
// output's) go further: they are written back as the object spreads tRPC's source has
// (NATIVE_SPREADS below), which V8 makes about twice as fast as even the faster helper. The
// same test checks that the installed tRPC still holds those texts, and that a router built
// with the plugin answers as the installed tRPC does.
//
// Only the built service has it: `npm start` runs the sources through tsx with node_modules
// as installed, and so keeps tRPC's own helper (the same results, more slowly). It is one of
// the fast paths (index.ts in this folder): `FAST_PATHS=off npm run build` leaves tRPC as
// installed, and `npm run bench` measures /me on such a build beside the default one.

/** The helper as @trpc/server 11's ES module build defines it (dist/getErrorShape-*.mjs). */
export const TRPC_SPREAD_HELPER = `function _objectSpread2(e) {
\tfor (var r = 1; r < arguments.length; r++) {
\t\tvar t = null != arguments[r] ? arguments[r] : {};
\t\tr % 2 ? ownKeys(Object(t), !0).forEach(function(r) {
\t\t\t_defineProperty(e, r, t[r]);
\t\t}) : Object.getOwnPropertyDescriptors ? Object.defineProperties(e, Object.getOwnPropertyDescriptors(t)) : ownKeys(Object(t)).forEach(function(r) {
\t\t\tObject.defineProperty(e, r, Object.getOwnPropertyDescriptor(t, r));
\t\t});
\t}
\treturn e;
}`;

/**
 * `_objectSpread2(target, a, b, c, …)`: the odd arguments are spread sources (their own
 * enumerable keys, symbols included, read as values), the even ones literal parts of the
 * spread (copied as described, accessors included).
 */
export function objectSpread2(target) {
  for (var i = 1; i < arguments.length; i++) {
    var from = Object(arguments[i] == null ? {} : arguments[i]);
    var described = i % 2 === 0;
    var keys = described ? Reflect.ownKeys(from) : Object.keys(from);
    for (var k = 0; k < keys.length; k++) spreadCopyProperty(target, from, keys[k], described);
    if (!described) {
      var symbols = Object.getOwnPropertySymbols(from);
      for (var s = 0; s < symbols.length; s++) {
        if (Object.prototype.propertyIsEnumerable.call(from, symbols[s])) spreadCopyProperty(target, from, symbols[s], false);
      }
    }
  }
  return target;
}

/** Writable, enumerable and configurable data: what an assignment to a new key makes. */
export function spreadIsPlainData(descriptor) {
  return descriptor !== undefined && 'value' in descriptor && descriptor.writable === true && descriptor.enumerable === true && descriptor.configurable === true;
}

/** One property, as the original helper copies it: by its descriptor, or as a plain value. */
export function spreadCopyProperty(target, from, key, described) {
  var descriptor = described ? Object.getOwnPropertyDescriptor(from, key) : undefined;
  if (described && !spreadIsPlainData(descriptor)) {
    Object.defineProperty(target, key, descriptor);
    return;
  }
  var value = described ? descriptor.value : from[key];
  // A key the target lacks nowhere on its chain, or holds as its own plain data, ends the same
  // assigned or defined; one it inherits (`__proto__`'s setter) or holds otherwise does not.
  if (!(key in target) || spreadIsPlainData(Object.getOwnPropertyDescriptor(target, key))) target[key] = value;
  else Object.defineProperty(target, key, { value: value, enumerable: true, configurable: true, writable: true });
}

/** The same module text with `objectSpread2` in place of the helper; undefined when the text has no helper to swap. */
export function withFasterSpread(source) {
  if (!source.includes(TRPC_SPREAD_HELPER)) return undefined;
  const replacement = [objectSpread2, spreadIsPlainData, spreadCopyProperty]
    .map(String)
    .join('\n')
    .replace('function objectSpread2(', 'function _objectSpread2(');
  return source.replace(TRPC_SPREAD_HELPER, replacement);
}

/**
 * The copies tRPC makes on every call of a procedure, in the file that defines its middleware
 * chain (dist/initTRPC-*.mjs): at every level of the chain (`callRecursive`, the options for
 * the middleware and for its `next`), in the output middleware (the result with its parsed
 * data) and in the input middleware (an object input merged with the parsed one). tRPC's
 * source writes them as object spreads (`{ ...opts, meta, input, next() {} }`); its compiler
 * turned each into `_objectSpread2` calls. Here they are written back as the source has them,
 * which V8 makes about twice as fast as the faster helper above: the same objects, by the
 * language's own definition of the syntax the helper stands in for. Each text must be found
 * exactly as below, or the build fails (see fasterTrpcSpread).
 */
export const NATIVE_SPREADS = [
  {
    name: 'the middleware chain (callRecursive)',
    compiled: [
      '\t\treturn await middleware(_objectSpread2(_objectSpread2({}, opts), {}, {',
      '\t\t\tmeta: _def.meta,',
      '\t\t\tinput: opts.input,',
      '\t\t\tnext(_nextOpts) {',
      '\t\t\t\tvar _nextOpts$getRawInput;',
      '\t\t\t\tconst nextOpts = _nextOpts;',
      '\t\t\t\treturn callRecursive(index + 1, _def, _objectSpread2(_objectSpread2({}, opts), {}, {',
      '\t\t\t\t\tctx: (nextOpts === null || nextOpts === void 0 ? void 0 : nextOpts.ctx) ? _objectSpread2(_objectSpread2({}, opts.ctx), nextOpts.ctx) : opts.ctx,',
      '\t\t\t\t\tinput: nextOpts && "input" in nextOpts ? nextOpts.input : opts.input,',
      '\t\t\t\t\tgetRawInput: (_nextOpts$getRawInput = nextOpts === null || nextOpts === void 0 ? void 0 : nextOpts.getRawInput) !== null && _nextOpts$getRawInput !== void 0 ? _nextOpts$getRawInput : opts.getRawInput',
      '\t\t\t\t}));',
      '\t\t\t}',
      '\t\t}));',
    ].join('\n'),
    native: [
      '\t\treturn await middleware({',
      '\t\t\t...opts,',
      '\t\t\tmeta: _def.meta,',
      '\t\t\tinput: opts.input,',
      '\t\t\tnext(_nextOpts) {',
      '\t\t\t\tvar _nextOpts$getRawInput;',
      '\t\t\t\tconst nextOpts = _nextOpts;',
      '\t\t\t\treturn callRecursive(index + 1, _def, {',
      '\t\t\t\t\t...opts,',
      '\t\t\t\t\tctx: (nextOpts === null || nextOpts === void 0 ? void 0 : nextOpts.ctx) ? { ...opts.ctx, ...nextOpts.ctx } : opts.ctx,',
      '\t\t\t\t\tinput: nextOpts && "input" in nextOpts ? nextOpts.input : opts.input,',
      '\t\t\t\t\tgetRawInput: (_nextOpts$getRawInput = nextOpts === null || nextOpts === void 0 ? void 0 : nextOpts.getRawInput) !== null && _nextOpts$getRawInput !== void 0 ? _nextOpts$getRawInput : opts.getRawInput',
      '\t\t\t\t});',
      '\t\t\t}',
      '\t\t});',
    ].join('\n'),
  },
  {
    name: 'the output middleware',
    compiled: '\t\t\treturn _objectSpread2(_objectSpread2({}, result), {}, { data });',
    native: '\t\t\treturn { ...result, data };',
  },
  {
    name: 'the input middleware',
    compiled: 'isObject(opts.input) && isObject(parsedInput) ? _objectSpread2(_objectSpread2({}, opts.input), parsedInput) : parsedInput;',
    native: 'isObject(opts.input) && isObject(parsedInput) ? { ...opts.input, ...parsedInput } : parsedInput;',
  },
];

/** What marks the file NATIVE_SPREADS are written for. */
export const MIDDLEWARE_CHAIN_MARKER = 'async function callRecursive(index, _def, opts) {';

/** The same module text with each of NATIVE_SPREADS written natively; undefined when one is not found exactly once. */
export function withNativeSpreads(source) {
  let contents = source;
  for (const { compiled, native } of NATIVE_SPREADS) {
    const at = contents.indexOf(compiled);
    if (at < 0 || contents.indexOf(compiled, at + 1) >= 0) return undefined;
    contents = contents.slice(0, at) + native + contents.slice(at + compiled.length);
  }
  return contents;
}

/**
 * The esbuild plugin. A tRPC file that defines `_objectSpread2` other than as expected, or
 * the middleware chain's file without each of NATIVE_SPREADS as expected, fails the build:
 * the rewrites were made for those texts alone.
 */
export function fasterTrpcSpread() {
  return {
    name: 'faster-trpc-spread',
    setup(build) {
      build.onLoad({ filter: /[\\/]@trpc[\\/]server[\\/]dist[\\/][^\\/]+\.mjs$/ }, async (args) => {
        const { readFile } = await import('node:fs/promises');
        const source = await readFile(args.path, 'utf8');
        let contents = source;
        if (contents.includes('function _objectSpread2(')) {
          contents = withFasterSpread(contents);
          if (!contents) return { errors: [{ text: `${args.path} defines _objectSpread2 other than gateway/src/fast-paths/trpc-spread.mjs expects: compare the two and update TRPC_SPREAD_HELPER` }] };
        }
        if (contents.includes(MIDDLEWARE_CHAIN_MARKER)) {
          contents = withNativeSpreads(contents);
          if (!contents) return { errors: [{ text: `${args.path} no longer holds each of NATIVE_SPREADS exactly once (gateway/src/fast-paths/trpc-spread.mjs): compare them with it and update them` }] };
        }
        return contents === source ? undefined : { contents, loader: 'js' };
      });
    },
  };
}
