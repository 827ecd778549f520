// `npm run build`: the service, the migration runner and the operator CLI as JavaScript in
// dist/, what the image runs with `node`. Type checking is `npm run typecheck`; this only emits.
//
// One bundle per entry point (shared code split into chunks) rather than a file per source:
// Node then reads a few files instead of some two thousand, and a start reaches /readyz in
// about a second instead of two and a half (README, "Benchmarks").
import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

// `--outdir=…` builds elsewhere (tests build their own copy); it must sit inside the
// repository so that the packages left external resolve from its node_modules.
const outdir = process.argv.find((arg) => arg.startsWith('--outdir='))?.slice('--outdir='.length) ?? 'dist';
// `--entry=name=path` adds an entry point built with the same settings: the bench builds its
// service process (bench/serve.ts) this way, so that it measures the code the image runs.
const extraEntries = Object.fromEntries(
  process.argv.filter((arg) => arg.startsWith('--entry=')).map((arg) => arg.slice('--entry='.length).split('=')),
);

/**
 * Left to node_modules at run time: packages that load files of their own by path (a native
 * binary, WebAssembly, static assets), optional drivers that are never installed, and the
 * embedded database, which the production image leaves out.
 */
const external = [
  '@node-rs/argon2',
  '@electric-sql/pglite',
  '@electric-sql/pglite-socket',
  'swagger-ui-dist',
  'pg-native',
  'pg-hstore',
];

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { main: 'gateway/src/main.ts', migrate: 'server/src/roles/migrate.ts', admin: 'server/src/cli/admin.ts', healthcheck: 'gateway/src/healthcheck.ts', ...extraEntries },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  minifyWhitespace: true,
  minifySyntax: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  external,
  // CommonJS packages inside an ES module bundle still call require(). (With splitting, a
  // dynamic import() of a CommonJS package yields only its default export: the code imports
  // packages statically and defers its own modules instead, see migrations/index.ts.)
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});

// Files the pages read next to their module (gateway/src/pages/kit/assets.ts); in the bundle that
// module lives in dist/, so they go to dist/assets. (The passkey script's WebAuthn library is
// read from node_modules/@simplewebauthn/browser at run time, as Swagger UI's files are.)
cpSync('gateway/src/pages/kit/assets', `${outdir}/assets`, { recursive: true });
console.log(`built ${outdir}/main.js (the service), ${outdir}/migrate.js, ${outdir}/admin.js (the CLI)`);
