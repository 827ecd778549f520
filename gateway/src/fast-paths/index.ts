// The fast paths: code that reaches into a library's internals to make a hot path cheaper,
// all of it in this folder, behind one switch, FAST_PATHS (on by default). One is left:
//
// The REST handler (openapi-handler.ts): trpc-to-openapi's node handler rebuilt from the
// pieces its package exports (routing, input, coercion) and tRPC's call of a procedure,
// without the Fetch `Request` the library builds on every call only to hand procedures an
// abort signal none of ours reads; with it, the gateway finds a REST route before its router
// tries every route of the site (routes/rest.ts). Off: the library's public
// `createOpenApiNodeHttpHandler` behind the router (stock-openapi-handler.ts). What it buys:
// the `me-api-key-stock-handler` row of `npm run bench` (docs/BENCHMARKS.md), /me by API key
// per CPU-second without it beside with it; with it /me took well under half the CPU.
//
// (A second one, a build step rewriting tRPC's `_objectSpread2` helper and its middleware
// chain's copies as native spreads, bought less than the 10% a fast path must buy on its row,
// about 9% of /me's CPU, and was removed: the build bundles tRPC as installed.)
//
// Why it is safe: it gives the same answers as the library's own handler.
// tests/fast-paths.compare.rest.test.ts sends every REST route of the OpenAPI document the same
// requests (credentials or none, bad JSON, the wrong type, misplaced and unknown fields,
// HEAD) through the gateway built both ways and compares the answers byte for byte;
// tests/internals.db.test.ts tries each library piece the handler uses.
//
// How it is kept to its libraries' versions: MADE_FOR names the versions it was written
// against, and tests/fast-paths.pins.unit.test.ts fails when an installed one differs, naming
// what to compare again before the pin moves.

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
] as const;
