import { appendFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * With RECORD_ANSWERS=<dir>, every answer a suite gets through `request()` is appended to
 * <dir>/<test file>.jsonl: method, path, the request body, status, the headers a caller
 * acts on, and the body. Two recordings of the suite (before and after a change meant to
 * change no behaviour) are compared with `npm run answers:compare -- <before> <after>`.
 */
const target = process.env.RECORD_ANSWERS;
// Read at each answer, not once: a warm test process (helpers/file-runner.mjs) runs one file
// after another and sets argv[1] to the file in hand.
const suiteFile = () => basename(process.argv[1] ?? 'unknown');

// Headers that say something about the request itself (date, request id, length) are left out.
const KEPT_HEADERS = ['content-type', 'cache-control', 'set-cookie', 'www-authenticate', 'retry-after', 'allow', 'location', 'vary', 'strict-transport-security', 'content-security-policy', 'x-frame-options', 'referrer-policy', 'x-content-type-options', 'connection', 'access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers'];

export function recordAnswer(method: string, path: string, requestBody: unknown, answer: { status: number; headers: Headers; text: string }): void {
  if (!target) return;
  mkdirSync(target, { recursive: true });
  const headers = Object.fromEntries(KEPT_HEADERS.flatMap((name) => (answer.headers.has(name) ? [[name, name === 'set-cookie' ? answer.headers.getSetCookie() : answer.headers.get(name)]] : [])));
  const line = { method, path, request: typeof requestBody === 'string' ? requestBody : requestBody === undefined ? null : '<bytes>', status: answer.status, headers, body: answer.text };
  appendFileSync(join(target, `${suiteFile()}.jsonl`), `${JSON.stringify(line)}\n`);
}
