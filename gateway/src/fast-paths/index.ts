// The fast paths: code that reaches into a library's internals to make a hot path cheaper,
// all of it in this folder, all of it behind one switch, FAST_PATHS (on by default).
//
// 1. The REST handler (openapi-handler.ts): trpc-to-openapi's node handler rebuilt from the
//    pieces its package exports (routing, input, coercion) and tRPC's call of a procedure,
//    without the Fetch `Request` the library builds on every call only to hand procedures an
//    abort signal none of ours reads; with it, the gateway finds a REST route before its
//    router tries every route of the site (routes/rest.ts). Off: the library's public
//    `createOpenApiNodeHttpHandler` behind the router (stock-openapi-handler.ts).
// 2. tRPC's object spreads (trpc-spread.mjs): a build step that swaps the `_objectSpread2`
//    helper in tRPC's bundle for one with the same result, and writes the copies made on every
//    call of a procedure back as native spreads. Only `npm run build` makes it (tsx runs
//    tRPC as installed), and it reads the same variable: `FAST_PATHS=off npm run build`
//    bundles tRPC untouched.
//
// Why they are safe: each gives the same answers as the library's own code.
// tests/fast-paths.compare.unit.test.ts sends every REST route of the OpenAPI document the same
// requests (good ones, errors, garbage) through the gateway built both ways and compares the
// answers byte for byte; tests/build.trpc-spread.unit.test.ts compares the rewritten helper
// with tRPC's, builds a router both ways and compares its answers, and the build fails when
// tRPC's text is not the one rewritten. tests/internals.db.test.ts tries each library piece
// the REST handler uses. What each buys is a row of `npm run bench` (docs/BENCHMARKS.md):
// /me with the library's handler, and /me on a build of tRPC as installed, each beside /me
// with everything on; a fast path that buys less than 10% there is removed.
//
// How each is kept to its library's version: MADE_FOR names the versions each was written
// against, and tests/fast-paths.pins.unit.test.ts fails when the installed one differs,
// naming what to compare again before the pin moves.

export { createOpenApiHandler } from './openapi-handler.ts';
export { createStockOpenApiHandler } from './stock-openapi-handler.ts';

/** For each fast path, the versions it was made from, and what to compare again when one changes. */
export const MADE_FOR = [
  {
    fastPath: 'gateway/src/fast-paths/openapi-handler.ts',
    versions: { 'trpc-to-openapi': '3.3.0', '@trpc/server': '11.25.2' },
    recheck:
      "trpc-to-openapi's dist/esm/adapters/node-http/core.mjs (createOpenApiNodeHttpHandler) against createOpenApiHandler, step by step: routing, the Content-Type check, input from body or query, array keys and coercion, the context, the call of the procedure, the answer; and tRPC's createCaller for the options a procedure is called with",
  },
  {
    fastPath: 'gateway/src/fast-paths/trpc-spread.mjs',
    versions: { '@trpc/server': '11.25.2' },
    recheck: "@trpc/server's dist/*.mjs: the _objectSpread2 helper (TRPC_SPREAD_HELPER) and each copy of NATIVE_SPREADS in the middleware chain's file, against tRPC's source for those lines",
  },
] as const;
