import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { documentedPath, withWebhookRoutes } from '../gateway/src/routes/openapi-webhooks.ts';
import { docsCommand, GENERATED, regenerate, ROOT } from '../scripts/docs.ts';
import { API_PREFIX, procedures, restDocument } from '../scripts/docs/api.ts';
import { parseEnvExample, schemaVariables } from '../scripts/docs/configuration.ts';
import { headingAnchor } from '../scripts/docs/markdown.ts';
import { ERRORS } from '../server/src/errors/errors.ts';
import { PROVIDERS } from '../server/src/webhooks/registry.ts';

// The project documents itself: the references in docs/ are generated from the code and
// must match it, and no page sends a reader anywhere the repository does not have.

const test = suite('docs: generated from the code, complete, and self-contained');

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Every page a reader of the repository opens: the README, docs/ and the client's README. */
const PAGES = ['README.md', 'client/README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

test('every generated section is what npm run docs writes now', () => {
  for (const file of Object.keys(GENERATED)) {
    const text = read(file);
    assert.ok(regenerate(file, text) === text, `${file} is stale: run npm run docs`);
  }
});

test('a stale section is rewritten from the code, and the prose around it is kept', () => {
  const text = read('docs/API.md');
  const route = `### POST ${API_PREFIX}/auth/login`;
  assert.ok(text.includes(route));
  const stale = `${text.replace(route, '### POST /api/v1/auth/sign-in')}\nProse after the sections.\n`;
  assert.is(regenerate('docs/API.md', stale), `${text}\nProse after the sections.\n`);
});

test('npm run docs -- --check exits 0 on these files', () => {
  assert.is(docsCommand(true), 0);
});

test('docs/API.md has a section for every REST route and names every procedure', () => {
  const api = read('docs/API.md');
  const routes = Object.entries(restDocument().paths ?? {}).flatMap(([path, item]) => Object.keys(item as object).map((method) => `### ${method.toUpperCase()} ${API_PREFIX}${path}`));
  assert.ok(routes.length >= 20, `${routes.length} routes`);
  for (const heading of routes) assert.ok(api.includes(`\n${heading}\n`), `${heading} is documented`);
  for (const { path, meta } of procedures()) {
    assert.ok(api.includes(`| \`${path}\` |`), `${path} is in the procedure table`);
    if (!meta?.openapi) assert.ok(api.includes(`\n### ${path}\n`), `${path}, tRPC only, has a section of its own`);
  }
  for (const [code, { status }] of Object.entries(ERRORS)) assert.ok(api.includes(`| \`${code}\` | ${status} |`), `${code} is listed with ${status}`);
});

test('docs/WEBHOOKS.md has a section for every provider of the registry', () => {
  const webhooks = read('docs/WEBHOOKS.md');
  assert.is(PROVIDERS.length, 5);
  for (const provider of PROVIDERS) assert.ok(webhooks.includes(`\n### POST ${documentedPath(provider)}\n`), `${provider.route} is documented`);
});

test('every variable the config schema reads is in .env.example with a comment and in docs/CONFIGURATION.md, and nothing else is', () => {
  const schema = Object.keys(schemaVariables()).sort();
  assert.ok(schema.includes('DATABASE_URL') && schema.length >= 30, `${schema.length} variables`);
  const groups = parseEnvExample(read('.env.example'));
  assert.equal(groups.flatMap((group) => group.variables.map((variable) => variable.name)).sort(), schema);
  for (const group of groups) assert.ok(group.comment, `${group.variables[0].name} has a comment in .env.example`);
  const configuration = read('docs/CONFIGURATION.md');
  const documented = [...configuration.matchAll(/^\| \[`([A-Z_]+)`\]/gm)].map((match) => match[1]).sort();
  assert.equal(documented, schema);
});

test('.env.example parses into the blocks its comments explain', () => {
  const groups = parseEnvExample('# The file.\n\n# Where to listen.\nPORT=3000\nHOST=0.0.0.0\n# The base.\nPUBLIC_URL=\n\nLONE=1\n');
  assert.equal(groups, [
    { comment: 'Where to listen.', variables: [{ name: 'PORT', example: '3000' }, { name: 'HOST', example: '0.0.0.0' }] },
    { comment: 'The base.', variables: [{ name: 'PUBLIC_URL', example: '' }] },
    { comment: '', variables: [{ name: 'LONE', example: '1' }] },
  ]);
});

test('no page points at a document outside the repository', () => {
  for (const page of [...PAGES, 'CHANGELOG.md']) {
    const text = read(page);
    for (const pattern of [/\.\.\/shared/, /CONTRACT\.md/i, /contract section/i, /\bthe contract\b/i]) {
      assert.not.ok(pattern.test(text), `${page} mentions ${pattern}: ${text.match(pattern)?.[0]}`);
    }
  }
  assert.ok(PAGES.includes('docs/API.md') && PAGES.includes('docs/CONFIGURATION.md') && PAGES.includes('docs/WEBHOOKS.md'));
});

test('the OpenAPI document readers see mentions no contract', () => {
  const text = JSON.stringify(withWebhookRoutes(restDocument(), 'http://localhost:3000'));
  assert.not.ok(/contract/i.test(text), text.match(/.{80}contract.{40}/i)?.[0]);
});

/** Each heading's anchor, as GitHub makes them: a repeated one gets -1, -2, … */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(text).split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const anchor = headingAnchor(heading[1]);
    const count = seen.get(anchor) ?? 0;
    anchors.add(count ? `${anchor}-${count}` : anchor);
    seen.set(anchor, count + 1);
  }
  return anchors;
}

const withoutCode = (text: string) => text.replace(/^ *```[\s\S]*?^ *```/gm, '');

test('every relative link of the pages reaches a file, and its heading when it names one', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const [, target] of withoutCode(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [file, anchor] = target.split('#');
      const path = file ? resolve(dirname(join(ROOT, page)), file) : join(ROOT, page);
      checked += 1;
      if (!existsSync(path)) broken.push(`${page}: ${target} (no ${relative(ROOT, path)})`);
      else if (anchor && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  assert.ok(checked > 100, `${checked} links checked`);
  assert.equal(broken, []);
});

test('README.md opens with the two commands a newcomer runs, and nothing else', () => {
  const readme = read('README.md');
  const firstBlock = /```\w*\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const commands = firstBlock.split('\n').filter(Boolean).map((line) => line.replace(/\s+#.*$/, ''));
  assert.equal(commands, ['npm install && npm start', 'npm test']);
  assert.ok(readme.indexOf('```') < readme.indexOf('\n## '), 'the block comes before the first section');
});

test("README.md's curl walk-through calls real REST routes, from registering to logging out", () => {
  const readme = read('README.md');
  assert.ok(readme.includes('npm start 2>&1 | tee gatehouse.log'), 'the walk-through starts the service with its log kept');
  const routes = new Set(Object.keys(restDocument().paths ?? {}).map((path) => `${API_PREFIX}${path}`));
  const called = [...readme.matchAll(/\$BASE(\/api\/v1\/[\w/-]+)/g)].map((match) => match[1]);
  assert.equal(called.filter((path) => !routes.has(path)), [], 'the README calls routes the API does not have');
  for (const step of ['register', 'verify-email', 'login', 'me', 'logout']) assert.ok(called.includes(`${API_PREFIX}/auth/${step}`), `the walk-through calls /auth/${step}`);
});

const BENCHMARKS = 'docs/BENCHMARKS.md';
const RESULTS = /<!-- bench:start -->([\s\S]*?)<!-- bench:end -->/;

/** A row's ratio to one of its references in the results `npm run bench` wrote, as printed ("36.9%"). */
function benchRatio(results: string, label: string, reference: string): string {
  const row = results.split('\n').find((line) => line.startsWith(`| ${label} |`));
  const ratio = row && new RegExp(`([\\d.]+%) of ${reference} \\(`).exec(row)?.[1];
  if (!ratio) throw new Error(`${BENCHMARKS}'s latest results have no row "${label}" with a ratio to ${reference}`);
  return ratio;
}

test(`${BENCHMARKS} is a document of at most 25 KB: the method and the latest results`, () => {
  const text = read(BENCHMARKS);
  assert.ok(Buffer.byteLength(text) <= 25_000, `${BENCHMARKS} is ${Buffer.byteLength(text)} bytes: keep the method and the latest results, history lives in git`);
  assert.ok(RESULTS.test(text), 'the latest results stand between the bench markers');
  assert.not.ok(RESULTS.test(read('README.md')), 'npm run bench writes into docs/BENCHMARKS.md, not the README');
});

test("README.md's one line of headline figures is the latest run's, and links docs/BENCHMARKS.md", () => {
  const results = RESULTS.exec(read(BENCHMARKS))?.[1] ?? '';
  const date = /`npm run bench` on (\d{4}-\d{2}-\d{2})/.exec(results)?.[1];
  const me = ['GET /me, API key', 'GET /me, JWT (Bearer)', 'GET /me, cookie'].map((label) => benchRatio(results, label, 'bare'));
  const byValue = (a: string, b: string) => parseFloat(a) - parseFloat(b);
  const figures = [
    date,
    `${[...me].sort(byValue)[0]} to ${[...me].sort(byValue)[2]}`,
    benchRatio(results, 'POST /login', 'hash-ceiling'),
    benchRatio(results, 'POST /webhook/payment/{siteKey}, signed, committed before the 200', 'ingest-floor'),
  ];
  const lines = read('README.md').split('\n').filter((line) => line.includes('(docs/BENCHMARKS.md)') && /\d%/.test(line));
  assert.is(lines.length, 1, 'one line of headline figures');
  const missing = figures.filter((figure) => !lines[0].includes(String(figure)));
  assert.equal(missing, [], `README.md's headline figures are not the latest run's: it should say ${figures.join(', ')}`);
});

test('no page reads as a diary of sessions or runs: history lives in git', () => {
  const diary = [/\b(?:third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)\s+session\b/i, /\bnotes\s+(?:of|on)\s+the\b/i, /\bsession\s+notes\b/i];
  for (const page of [...PAGES, 'CHANGELOG.md']) {
    const text = read(page);
    for (const pattern of diary) assert.not.ok(pattern.test(text), `${page}: ${text.match(new RegExp(`.{0,60}${pattern.source}.{0,40}`, 'i'))?.[0]}`);
  }
});

test.run();
