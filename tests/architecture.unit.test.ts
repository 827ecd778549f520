import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

// The layering docs/ARCHITECTURE.md describes, checked on the source itself: every import,
// type-only ones included, read from the files as written.

const root = fileURLToPath(new URL('..', import.meta.url));
const test = suite('architecture: modules point one way');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

// Static imports and re-exports (with or without bindings) and dynamic import() calls.
const IMPORT = /(?:(?:^|\n)\s*(?:import|export)\s(?:[^'"]*?from\s+)?|\bimport\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** Project file -> the project files it imports (relative to the repository). */
function importGraph(dirs = ['server/src', 'gateway/src', 'client/src']): Map<string, string[]> {
  const files = dirs.flatMap((dir) => sourceFiles(join(root, dir)));
  return new Map(
    files.map((file) => {
      const text = readFileSync(file, 'utf8');
      const targets = [...text.matchAll(IMPORT)].map((match) => relative(root, resolve(dirname(file), match[1])));
      return [relative(root, file), targets];
    }),
  );
}

const graph = importGraph();

function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') found.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

const importsOf = (prefix: string, of = graph) => [...of].filter(([file]) => file.startsWith(prefix));

test('the import graph has no cycle, type-only imports included', () => {
  assert.equal(cycles().map((cycle) => cycle.join(' -> ')), []);
});

test('lib/ imports nothing from the application', () => {
  const outside = importsOf('server/src/lib/').flatMap(([file, targets]) =>
    targets.filter((target) => !target.startsWith('server/src/lib/')).map((target) => `${file} -> ${target}`),
  );
  assert.equal(outside, []);
});

test('modules never import webhooks/ or the gateway; services never import tRPC or Koa', () => {
  const wrong = importsOf('server/src/modules/').flatMap(([file, targets]) =>
    targets.filter((target) => target.startsWith('server/src/webhooks/') || target.startsWith('gateway/')).map((target) => `${file} -> ${target}`),
  );
  assert.equal(wrong, []);
  const services = importsOf('server/src/modules/').filter(([file]) => !file.endsWith('.router.ts'));
  const transport = services.filter(([file]) => /from ['"](@trpc\/server|koa|@koa\/router)['"]/.test(readFileSync(join(root, file), 'utf8')));
  assert.equal(transport.map(([file]) => file), []);
});

const MODULES = 'server/src/modules/';
/** The module a file belongs to (its folder under server/src/modules), if any. */
const moduleOf = (file: string) => (file.startsWith(MODULES) ? /^([^/]+)\//.exec(file.slice(MODULES.length))?.[1] : undefined);
const isFace = (file: string) => file === `${MODULES}${moduleOf(file)}/index.ts`;

/**
 * The two composition roots reach behind a face, each for what a face cannot carry. router.ts
 * mounts each module's procedures (`<module>.router.ts`): every router builds on
 * trpc/procedures.ts, which imports the sessions and mfa faces, so a face that re-exported
 * its procedures would close a cycle. deps.ts builds the sessions' cache and touch writer:
 * the sessions face names Deps.
 */
const BEHIND_FACES: Record<string, RegExp> = {
  'server/src/router.ts': /^server\/src\/modules\/([^/]+)\/\1\.router\.ts$/,
  'server/src/deps.ts': /^server\/src\/modules\/sessions\/sessions\.(?:cache|touches)\.ts$/,
};

test('every module has a face: an index.ts', () => {
  const modules = readdirSync(join(root, MODULES)).filter((name) => statSync(join(root, MODULES, name)).isDirectory());
  assert.equal(modules.filter((name) => !graph.has(`${MODULES}${name}/index.ts`)), []);
});

test('a module imports another module only through its face, type-only imports included', () => {
  const wrong = importsOf(MODULES).flatMap(([file, targets]) =>
    targets.filter((target) => moduleOf(target) && moduleOf(target) !== moduleOf(file) && !isFace(target)).map((target) => `${file} -> ${target}`),
  );
  assert.equal(wrong, []);
});

test('outside the modules, the server and the gateway import a module through its face only', () => {
  const outside = [...importsOf('server/src/'), ...importsOf('gateway/src/')].filter(([file]) => !moduleOf(file));
  const wrong = outside.flatMap(([file, targets]) =>
    targets.filter((target) => moduleOf(target) && !isFace(target) && !BEHIND_FACES[file]?.test(target)).map((target) => `${file} -> ${target}`),
  );
  assert.equal(wrong, []);
});

test('admin/ and cli/ sit on top: no module, webhook or lib file imports them', () => {
  const below = ['server/src/modules/', 'server/src/webhooks/', 'server/src/lib/'].flatMap((dir) => importsOf(dir));
  const wrong = below.flatMap(([file, targets]) =>
    targets.filter((target) => target.startsWith('server/src/admin/') || target.startsWith('server/src/cli/')).map((target) => `${file} -> ${target}`),
  );
  assert.equal(wrong, []);
});

test('the server never imports the gateway; connections are made by lib/ and asked for only by deps.ts', () => {
  const upward = importsOf('server/src/').flatMap(([file, targets]) => targets.filter((target) => target.startsWith('gateway/')).map((target) => `${file} -> ${target}`));
  assert.equal(upward, []);
  const text = (file: string) => readFileSync(join(root, file), 'utf8');
  const constructing = [...graph.keys()].filter((file) => /new (?:pg\.)?(?:Client|Pool)\(|new Sequelize\(|createTransport\(|new PgBoss\(|PGlite\.create\(/.test(text(file)));
  assert.equal(constructing.filter((file) => !file.startsWith('server/src/lib/')), []);
  const asking = [...graph.keys()].filter((file) => /\b(?:createDatabase|startQueue|createMailer|createPgListener)\(/.test(text(file)) && !file.startsWith('server/src/lib/'));
  // Entry points that need the database and nothing else: `npm run migrate`, and the CLI's
  // `migrate status`, which must not migrate.
  assert.equal(asking.sort(), ['server/src/cli/session.ts', 'server/src/deps.ts', 'server/src/roles/migrate.ts']);
});

const FACE = 'server/src/index.ts';
const CLI = 'server/src/cli/';

/**
 * What the CLI reads before it loads the face, which takes a second or more (cli/session.ts):
 * its settings, and the names and input schemas that describe its commands and refuse a typo
 * at once. Each is a light file: it loads nothing of the server's stack.
 */
const CLI_BEFORE_FACE = ['server/src/config.ts', 'server/src/lib/text.ts', 'server/src/webhooks/provider.ts', 'server/src/webhooks/inbox/repo.ts', 'server/src/admin/admin.schemas.ts'];

test('the gateway, the CLI and the bench reach the server through its face, server/src/index.ts, type-only imports included', () => {
  const users = [...importsOf('gateway/src/'), ...importsOf('bench/', importGraph(['bench'])), ...importsOf(CLI)];
  const wrong = users.flatMap(([file, targets]) =>
    targets
      .filter((target) => target.startsWith('server/src/') && target !== FACE && !target.startsWith(CLI))
      .filter((target) => !(file.startsWith(CLI) && CLI_BEFORE_FACE.includes(target)))
      .map((target) => `${file} -> ${target}`),
  );
  assert.equal(wrong, []);
  // Nothing inside the server goes through its own face: only the CLI, which sits on top.
  const inward = importsOf('server/src/').filter(([file, targets]) => !file.startsWith(CLI) && targets.includes(FACE));
  assert.equal(inward.map(([file]) => file), []);
});

test('the CLI loads the face when a command runs, never at start: only type-only and import() uses of it', () => {
  const eager = importsOf(CLI).flatMap(([file]) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(/(?:^|\n)\s*(import|export)(\s+type)?\s[^'";=()]*?\bfrom\s+['"]\.\.\/index\.ts['"]/g)]
      .filter((match) => !match[2])
      .map(() => file),
  );
  assert.equal(eager, []);
});

test("trpc-to-openapi beyond its documented API is reached from one file, gateway/src/routes/openapi-handler.ts", () => {
  // The rest of the code uses what its README documents: the document generator and the meta type.
  const documented = new Set(['generateOpenApiDocument', 'OpenApiMeta']);
  const wrong = [...graph.keys()]
    .filter((file) => file !== 'gateway/src/routes/openapi-handler.ts')
    .flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+['"]trpc-to-openapi['"]/g)].flatMap((match) =>
        match[1]
          .split(',')
          .map((name) => name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0])
          .filter((name) => name && !documented.has(name))
          .map((name) => `${file} -> ${name}`),
      ),
    );
  assert.equal(wrong, []);
});

const PACKAGE_NAME = /^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:\/[\w./-]*)?$/;

/** Every package name a file imports: static, type-only, dynamic and require()d. */
function packagesImportedBy(file: string): Array<{ name: string; typeOnly: boolean }> {
  const text = readFileSync(join(root, file), 'utf8');
  const found = [...text.matchAll(/(?:^|\n)\s*(import\s+type\s|import\s|export\s)(?:[^'"]*?from\s+)?['"]([^'".][^'"]*)['"]|\b(?:import|require)\(\s*['"]([^'".][^'"]*)['"]/g)];
  return found
    .map((match) => ({ specifier: match[2] ?? match[3], typeOnly: Boolean(match[1]?.startsWith('import type')) }))
    .filter(({ specifier }) => !specifier.startsWith('node:') && PACKAGE_NAME.test(specifier))
    .map(({ specifier, typeOnly }) => ({ name: specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'), typeOnly }));
}

test('every package the code imports is declared; what the service runs on is a dependency, not a devDependency', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const runtime = new Set(Object.keys(manifest.dependencies));
  // @gatehouse/client is this repository's own package, installed only into the throwaway
  // frontend project tests/client.package.process.test.ts writes.
  const declared = new Set([...runtime, ...Object.keys(manifest.devDependencies), '@gatehouse/client']);
  const service = [...graph.keys()].filter((file) => file.startsWith('server/src/') || file.startsWith('gateway/src/'));
  // The embedded database is for development: production refuses it, the image leaves it out,
  // and lib/db.ts imports it only when there is no DATABASE_URL.
  const devOnly = new Set(['server/src/lib/embedded-postgres.ts']);
  const undeclared: string[] = [];
  const devAtRuntime: string[] = [];
  for (const file of [...graph.keys(), ...sourceFiles(join(root, 'tests')).map((path) => relative(root, path))]) {
    for (const { name, typeOnly } of packagesImportedBy(file)) {
      if (!declared.has(name)) undeclared.push(`${file} -> ${name}`);
      else if (service.includes(file) && !typeOnly && !runtime.has(name) && !devOnly.has(file)) devAtRuntime.push(`${file} -> ${name}`);
    }
  }
  assert.equal(undeclared, []);
  assert.equal(devAtRuntime, []);
});

test.run();
