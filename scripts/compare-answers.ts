/**
 * `npm run answers:compare -- <before> <after>`: the answers two recordings of the suite got
 * (RECORD_ANSWERS, tests/helpers/answers.ts), compared suite by suite after what differs
 * from run to run by design is replaced by placeholders: tokens, keys, ids, instants, ports.
 * Prints each answer that differs, and exits 1 if any does.
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
  [/127\.0\.0\.1:\d+|localhost:\d+/g, '<host>'],
  [/(site|ch|chan)_[\w-]{12,}/g, '$1_<key>'],
  [/whsec_[\w+/=-]+/g, 'whsec_<secret>'],
  [/[A-Za-z0-9_-]{40,}/g, '<token>'],
  [/"(retry-after)":"\d+"/g, '"$1":"<n>"'],
];

const normalise = (line: string) => VOLATILE.reduce((text, [pattern, placeholder]) => text.replace(pattern, placeholder), line);
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
  // Calls made at once (Promise.all) may be recorded in any order: compare as sorted lists.
  const [sortedA, sortedB] = [[...a].sort(), [...b].sort()];
  const length = Math.max(sortedA.length, sortedB.length);
  for (let i = 0; i < length; i++) {
    if (sortedA[i] === sortedB[i]) continue;
    differences += 1;
    console.log(`${file}:\n  before: ${sortedA[i] ?? '(none)'}\n  after:  ${sortedB[i] ?? '(none)'}`);
  }
}
console.log(`${files.length} suites, ${differences} answers differ`);
process.exit(differences ? 1 : 0);
