// Builds the @gatehouse/client package into client/dist: index.js (ESM) and one index.d.ts
// that imports nothing but @trpc/* (npm run build:client).
//
// tsc does the real work: src/app-router.ts is written so that its declaration is the
// client's view of the router spelled out in plain types. What is left here is joining
// that declaration with index.d.ts, which imports it, and refusing any output that would
// make a frontend install or type-check something other than @trpc/*.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const clientDir = dirname(fileURLToPath(import.meta.url));
const root = join(clientDir, '..');
const dist = join(clientDir, 'dist');
const emitted = join(dist, '.tsc', 'client', 'src');

/** Module specifiers the package may name: its peer dependencies. */
const ALLOWED = /^@trpc\/(client|server)(\/|$)/;

class BuildError extends Error {}

function compile() {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(clientDir, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (result.status !== 0) throw new BuildError(`tsc failed (exit ${result.status ?? result.signal})`);
}

const IMPORT = /^import (type )?\{ ([^}]*) \} from '([^']+)';$/;

/** A declaration file's lines: its leading comment, its imports by module, and the rest. */
function parseDeclarations(text, name) {
  const lines = text.split('\n');
  const firstCode = lines.findIndex((line) => line && !/^(\/\*\*|\s*\*|\/\/)/.test(line));
  const imports = new Map();
  const body = [];
  for (const line of lines.slice(firstCode)) {
    if (!line.startsWith('import ')) {
      if (line !== 'export {};') body.push(line);
      continue;
    }
    const match = IMPORT.exec(line);
    if (!match) throw new BuildError(`${name}: an import this script does not know how to merge: ${line}`);
    const [, allTypes, names, specifier] = match;
    const entries = imports.get(specifier) ?? new Map();
    for (const entry of names.split(', ')) {
      const [, typeOnly, binding] = /^(type )?(.+)$/.exec(entry);
      entries.set(binding, (entries.get(binding) ?? true) && Boolean(allTypes || typeOnly));
    }
    imports.set(specifier, entries);
  }
  return { leading: lines.slice(0, firstCode), imports, body };
}

/** index.d.ts with the router's declaration put in place of its import of it. */
function bundleDeclarations(indexText, routerText) {
  const index = parseDeclarations(indexText, 'index.d.ts');
  const router = parseDeclarations(routerText, 'app-router.d.ts');
  const fromRouter = index.imports.get('./app-router.ts');
  index.imports.delete('./app-router.ts');
  const exported = router.body.filter((line) => line.startsWith('export ')).map((line) => /^export type (\w+)\b/.exec(line)?.[1]);
  if (!fromRouter || exported.includes(undefined) || [...fromRouter.keys()].sort().join() !== exported.sort().join()) {
    throw new BuildError(`index.d.ts must import exactly the types app-router.d.ts exports (${exported.join(', ')})`);
  }
  const merged = new Map(index.imports);
  for (const [specifier, entries] of router.imports) {
    const into = new Map(merged.get(specifier));
    for (const [binding, typeOnly] of entries) into.set(binding, (into.get(binding) ?? true) && typeOnly);
    merged.set(specifier, into);
  }
  const importLines = [...merged].map(([specifier, entries]) => {
    const names = [...entries].map(([binding, typeOnly]) => (typeOnly ? `type ${binding}` : binding));
    return `import { ${names.join(', ')} } from '${specifier}';`;
  });
  // The router's exports become local: index.d.ts exports what it imported from it.
  const routerBody = router.body.map((line) => line.replace(/^export type /, 'type '));
  return [...index.leading, ...importLines, ...routerBody, ...index.body].join('\n');
}

/** Every module a file names: static imports and exports, and import("…") types. */
function specifiersIn(text) {
  return [...text.matchAll(/\bfrom '([^']+)'|\bimport\("([^"]+)"\)|\bimport\('([^']+)'\)/g)].map((match) => match[1] ?? match[2] ?? match[3]);
}

function assertOnlyPeers(file, text) {
  const foreign = specifiersIn(text).filter((specifier) => !ALLOWED.test(specifier));
  if (foreign.length) throw new BuildError(`${file} names modules outside @trpc/*: ${[...new Set(foreign)].join(', ')}`);
}

function build() {
  rmSync(dist, { recursive: true, force: true });
  try {
    compile();
    const declarations = bundleDeclarations(
      readFileSync(join(emitted, 'index.d.ts'), 'utf8'),
      readFileSync(join(emitted, 'app-router.d.ts'), 'utf8'),
    );
    assertOnlyPeers('index.d.ts', declarations);
    assertOnlyPeers('index.js', readFileSync(join(emitted, 'index.js'), 'utf8'));
    mkdirSync(dist, { recursive: true });
    copyFileSync(join(emitted, 'index.js'), join(dist, 'index.js'));
    writeFileSync(join(dist, 'index.d.ts'), declarations);
  } finally {
    rmSync(join(dist, '.tsc'), { recursive: true, force: true });
  }
}

try {
  build();
  console.log('client/dist: index.js, index.d.ts');
} catch (error) {
  if (!(error instanceof BuildError)) throw error;
  rmSync(dist, { recursive: true, force: true });
  console.error(`build:client: ${error.message}`);
  process.exit(1);
}
