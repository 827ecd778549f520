/**
 * `npm run answers:compare -- <before> <after>`: the answers two recordings of the suite got
 * (RECORD_ANSWERS, tests/helpers/answers.ts), compared suite by suite after what differs
 * from run to run by design is replaced by placeholders: tokens, keys, ids, instants, ports.
 * Prints the answers only one side got, and exits 1 if there are any.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [before, after] = process.argv.slice(2);
if (!before || !after) {
  console.error('usage: npm run answers:compare -- <before dir> <after dir>');
  process.exit(2);
}

const VOLATILE: Array<[RegExp, string]> = [
  [/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '<jwt>'],
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>'],
  [/\b[0-9a-f]{64}\b/g, '<hex64>'],
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g, '<instant>'],
  // A port of the service's, or the origin of one started in process (tests/helpers/service.ts).
  [/127\.0\.0\.1:\d+|localhost:\d+|gatehouse-\d+-\d+\.test/g, '<host>'],
  [/(site|ch|chan)_[\w-]{12,}/g, '$1_<key>'],
  [/whsec_[\w+/=-]+/g, 'whsec_<secret>'],
  [/[A-Za-z0-9_-]{40,}/g, '<token>'],
  [/d1\.\d+\.[\w-]{22}\./g, 'd1.<n>.<device>.'],
  [/-[0-9a-f]{8}@/g, '-<random>@'],
  [/\b[a-z0-9]{5}-[a-z0-9]{5}\b/g, '<recovery code>'],
  [/\b[A-Z2-7]{32}\b/g, '<totp secret>'],
  [/(code\\?"\s*:\s*\\?")\d{6}/g, '$1<code>'],
  [/\b1[6-9]\d{8}(\d{3})?\b/g, '<unix time>'],
  [/\b[A-Z0-9]{6}-[A-Z0-9]{6}\b/g, '<link code>'],
  [/"message_token\\?":\d+/g, '"message_token":<n>'],
  // Random ids and secrets tests make up (event ids, visitor cookies): mixed letters and digits.
  [/(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[a-zA-Z])[\w-]{16,}(?![\w-])/g, '<random>'],
  [/\bpi_[0-9a-f]{12}\b/g, 'pi_<random>'],
  [/\b[A-Z0-9]{5} [A-Z0-9]{5}\b/g, '<recovery code>'],
  [/"(retry-after)":"\d+"/g, '"$1":"<n>"'],
];

/** Answers whose whole body is made of timings and counts: only their status and headers are compared. */
const TIMING_BODIES = new Set(['/metrics']);

/**
 * Lists in a JSON body in a canonical order: what concurrent deliveries or requests made
 * arrives in any order (the suites assert the orders the API promises).
 */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, canonical(item)]));
  return value;
}

function normalise(line: string): string {
  const answer = JSON.parse(line);
  if (TIMING_BODIES.has(answer.path)) answer.body = '<timings>';
  try {
    answer.body = JSON.stringify(canonical(JSON.parse(answer.body)));
  } catch {
    // Not JSON: compared as it is.
  }
  // Whether the connection stays open is the socket's business, not the answer's: a service
  // reached in process (tests/helpers/service.ts) has none, and the suites that test it read
  // the socket itself (tests/gateway.sockets.http.test.ts).
  delete answer.headers?.connection;
  // Random bytes a test sends as garbage are different bytes every run.
  if (typeof answer.request === 'string' && /[\u0000-\u0008\u000e-\u001f\ufffd]/.test(answer.request)) answer.request = '<random bytes>';
  return VOLATILE.reduce((text, [pattern, placeholder]) => text.replace(pattern, placeholder), JSON.stringify(answer));
}
const read = (dir: string, file: string) => {
  try {
    return readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).map(normalise);
  } catch {
    return [];
  }
};

let differences = 0;
const files = [...new Set([...readdirSync(before), ...readdirSync(after)])].sort();
for (const file of files) {
  const [a, b] = [read(before, file), read(after, file)];
  // Calls made at once (Promise.all) may be recorded in any order, and a test that polls
  // asks as often as its timing makes it: compare the distinct answers.
  const [setA, setB] = [new Set(a), new Set(b)];
  const onlyBefore = [...setA].filter((line) => !setB.has(line)).sort();
  const onlyAfter = [...setB].filter((line) => !setA.has(line)).sort();
  differences += Math.max(onlyBefore.length, onlyAfter.length);
  for (const line of onlyBefore) console.log(`${file}:\n  only before: ${line}`);
  for (const line of onlyAfter) console.log(`${file}:\n  only after:  ${line}`);
}
console.log(`${files.length} suites, ${differences} answers differ`);
process.exit(differences ? 1 : 0);
