import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cyclesOf, importGraph, root, sourceFiles } from './helpers/import-graph.ts';

// The layering docs/ARCHITECTURE.md describes, checked on the source itself: every import,
// type-only ones included, read from the files as written.

const test = suite('architecture: modules point one way');

const graph = importGraph();

const importsOf = (prefix: string, of = graph) => [...of].filter(([file]) => file.startsWith(prefix));

test('the import graph has no cycle, type-only imports included', () => {
  assert.equal(cyclesOf(graph).map((cycle) => cycle.join(' -> ')), []);
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
 * The composition roots reach behind a face, each for what a face cannot carry. router.ts
 * mounts each module's procedures (`<module>.router.ts`): every router builds on
 * the access module's face, which imports the sessions, accounts and mfa faces, so a face that re-exported
 * its procedures would close a cycle. And the list of sealed columns deps.ts checks at start.
 */
const BEHIND_FACES: Record<string, RegExp> = {
  'server/src/router.ts': /^server\/src\/modules\/([^/]+)\/\1\.router\.ts$/,
  // Events out's operator procedures, merged into admin.*, and their service, which the CLI
  // calls through the server's face: the service names Deps, as the sessions face does.
  'server/src/admin/admin.router.ts': /^server\/src\/modules\/events\/events\.router\.ts$/,
  'server/src/index.ts': /^server\/src\/modules\/events\/events\.service\.ts$/,
  // The sealed columns' owners, for the DATA_KEY check deps.ts runs at start: the sites and
  // channels faces name Deps. Their repos import nothing that does.
  'server/src/secrets/sealed-columns.ts': /^server\/src\/modules\/(accounts|sites|channels|mfa|events)\/\1\.repo\.ts$/,
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
const CLI_BEFORE_FACE = ['server/src/config.ts', 'server/src/lib/text.ts', 'server/src/webhooks/provider.ts', 'server/src/webhooks/inbox/repo.ts', 'server/src/admin/admin.schemas.ts', 'server/src/errors/errors.ts'];

/**
 * The CLI's own end of the admin socket: a service on the embedded database runs the CLI's
 * commands, which sit on top of the face, so the face cannot offer them without a cycle.
 * server.ts, which starts the service, is the one gateway file that reaches it.
 */
const CLI_SERVICE_END = { file: 'gateway/src/server.ts', target: 'server/src/cli/serve.ts' };

test('the gateway, the CLI and the bench reach the server through its face, server/src/index.ts, type-only imports included', () => {
  const users = [...importsOf('gateway/src/'), ...importsOf('bench/', importGraph(['bench'])), ...importsOf(CLI)];
  const wrong = users.flatMap(([file, targets]) =>
    targets
      .filter((target) => target.startsWith('server/src/') && target !== FACE)
      .filter((target) => !(file.startsWith(CLI) && (target.startsWith(CLI) || CLI_BEFORE_FACE.includes(target))))
      .filter((target) => !(file === CLI_SERVICE_END.file && target === CLI_SERVICE_END.target))
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

test("trpc-to-openapi beyond its documented API is reached from one file, the fast path gateway/src/fast-paths/openapi-handler.ts", () => {
  // The rest of the code uses what its README documents (the document generator and the meta
  // type), and FAST_PATHS=off the node adapter that its adapters for Node servers wrap, with
  // the router type that adapter takes.
  const documented = new Set(['generateOpenApiDocument', 'OpenApiMeta', 'createOpenApiNodeHttpHandler', 'OpenApiRouter']);
  const wrong = [...graph.keys()]
    .filter((file) => file !== 'gateway/src/fast-paths/openapi-handler.ts')
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

// ------------------------------------------------------------ one owner per table

const MIGRATIONS_DIR = 'server/src/migrations/';

/** Every table the migrations create, and the migrator its record of them. */
const MIGRATED_TABLES = [...sourceFiles(join(root, MIGRATIONS_DIR)), join(root, 'server/src/lib/migrator.ts')]
  .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/\bCREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)].map((match) => match[1]))
  .sort();

const ACCOUNTS_REPO = 'server/src/modules/accounts/accounts.repo.ts';
const MFA_REPO = 'server/src/modules/mfa/mfa.repo.ts';

/**
 * Each table and the files whose SQL may name it: its owner's repo (docs/ARCHITECTURE.md).
 * Everyone else calls a function of the owner's face. The migrations, which make the
 * tables, are the one other place.
 */
const OWNERS: Record<string, string[]> = {
  accounts: [ACCOUNTS_REPO],
  email_tokens: [ACCOUNTS_REPO],
  admin_email_promotions: [ACCOUNTS_REPO],
  account_counts: [ACCOUNTS_REPO],
  sessions: ['server/src/modules/sessions/sessions.repo.ts'],
  audit_events: ['server/src/modules/activity/activity.repo.ts'],
  billing_subscriptions: ['server/src/modules/billing/billing.repo.ts'],
  sites: ['server/src/modules/sites/sites.repo.ts'],
  payments: ['server/src/modules/sites/sites.repo.ts'],
  channels: ['server/src/modules/channels/channels.repo.ts'],
  channel_messages: ['server/src/modules/channels/channels.repo.ts'],
  operator_link_codes: ['server/src/modules/notifications/notifications.repo.ts'],
  operator_chats: ['server/src/modules/notifications/notifications.repo.ts'],
  operator_chat_updates: ['server/src/modules/notifications/notifications.repo.ts'],
  mfa_totp: [MFA_REPO],
  mfa_recovery_codes: [MFA_REPO],
  passkeys: [MFA_REPO],
  mfa_challenges: [MFA_REPO],
  mfa_step_ups: [MFA_REPO],
  identities: ['server/src/modules/identities/identities.repo.ts'],
  identity_link_tickets: ['server/src/modules/identities/identities.repo.ts'],
  event_endpoints: ['server/src/modules/events/events.repo.ts'],
  events: ['server/src/modules/events/events.repo.ts'],
  event_deliveries: ['server/src/modules/events/events.repo.ts'],
  webhook_inbox: ['server/src/webhooks/inbox/repo.ts'],
  rate_limits: ['server/src/lib/rate-limiter.ts'],
  data_key_check: ['server/src/secrets/data-key-check.ts'],
  schema_migrations: ['server/src/lib/migrator.ts', 'server/src/lib/migration-status.ts'],
};

/** `table -> file` for every statement naming a table outside the files allowed to. */
function misplacedStatements(files: Array<{ file: string; text: string }>): string[] {
  const tables = Object.keys(OWNERS).join('|');
  const naming = new RegExp(`\\b(?:FROM|INTO|UPDATE|JOIN|TRUNCATE(?:\\s+TABLE)?)\\s+(?:ONLY\\s+)?(${tables})\\b`, 'g');
  const wrong = new Set<string>();
  for (const { file, text } of files) {
    if (file.startsWith(MIGRATIONS_DIR)) continue;
    for (const [, table] of text.matchAll(naming)) {
      if (!OWNERS[table].includes(file)) wrong.add(`${table} -> ${file}`);
    }
    // A table named at run time hides its owner from this check.
    for (const match of text.matchAll(/\b(?:FROM|INTO|UPDATE|JOIN|TRUNCATE)\s+\$\{/g)) wrong.add(`a table named at run time (${match[0]}…) -> ${file}`);
  }
  return [...wrong].sort();
}

const projectSources = () => ['server/src', 'gateway/src'].flatMap((dir) => sourceFiles(join(root, dir))).map((path) => ({ file: relative(root, path), text: readFileSync(path, 'utf8') }));

test('every migrated table has an owner, and every owner file exists', () => {
  assert.equal(Object.keys(OWNERS).sort(), [...new Set(MIGRATED_TABLES)].sort());
  const files = new Set(graph.keys());
  assert.equal(Object.values(OWNERS).flat().filter((file) => !files.has(file)), []);
});

test("SQL naming a table stands only in that table's owner files", () => {
  assert.equal(misplacedStatements(projectSources()), []);
});

/**
 * A fragment of SQL handed to another module would run inside that module's statement and
 * hide its table from the owner rule: a module's SQL stays in its repo, which no face
 * re-exports, and what crosses a face is a function that takes the transaction.
 */
test('no SQL fragment crosses a face: SQL stands in repos and migrations only, and no face hands on a repo', () => {
  const sql = /\b(?:SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+[a-z_]+\s+(?:[a-z]\s+)?SET|DELETE\s+FROM)\b/s;
  const outside = projectSources()
    .filter(({ file }) => file.startsWith('server/src/') && !file.startsWith(MIGRATIONS_DIR) && !/\.repo\.ts$|\/repo\.ts$/.test(file) && !file.startsWith('server/src/lib/') && !file.startsWith('server/src/secrets/'))
    .filter(({ text }) => [...text.matchAll(/(['"`])((?:(?!\1)[\s\S])*)\1/g)].some(([, , literal]) => sql.test(literal)))
    .map(({ file }) => file);
  assert.equal(outside, []);
  const faces = [...graph.keys()].filter(isFace);
  const handedOn = faces.flatMap((face) =>
    [...readFileSync(join(root, face), 'utf8').matchAll(/export\s+(?:\*\s+as\s+\w+|\{[^}]*\})\s+from\s+'\.\/([^']+\.repo\.ts)'/g)]
      .filter(([statement]) => /\*\s+as|Sql\b|SQL\b|COLUMNS\b/.test(statement))
      .map(([, repo]) => `${face} -> ${repo}`),
  );
  assert.equal(handedOn, []);
});

test('the owner rule catches a statement out of place', () => {
  const stray = [
    { file: 'server/src/modules/billing/billing.service.ts', text: "tx.query('UPDATE accounts SET plan = $2 WHERE id = $1')" },
    { file: 'server/src/modules/channels/channels.messages.ts', text: "tx.query(`SELECT chat_id\n  FROM operator_chats WHERE account_id = $1`)" },
    { file: 'server/src/roles/housekeeping.ts', text: "db.query('DELETE FROM rate_limits WHERE window_end < $1')" },
    { file: 'server/src/secrets/reencrypt.ts', text: 'db.query(`SELECT count(*) FROM ${sealed.table}`)' },
    { file: 'server/src/modules/sessions/sessions.repo.ts', text: "db.query('SELECT 1 FROM sites')" },
    { file: 'server/src/migrations/0001-accounts.ts', text: "sql('INSERT INTO accounts (id) VALUES (1)')" },
  ];
  assert.equal(misplacedStatements(stray), [
    'a table named at run time (FROM ${…) -> server/src/secrets/reencrypt.ts',
    'accounts -> server/src/modules/billing/billing.service.ts',
    'operator_chats -> server/src/modules/channels/channels.messages.ts',
    'rate_limits -> server/src/roles/housekeeping.ts',
    'sites -> server/src/modules/sessions/sessions.repo.ts',
  ]);
});

test.run();
