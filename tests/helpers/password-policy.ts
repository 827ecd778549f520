import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { dictionary } from '@zxcvbn-ts/language-common';
import * as assert from 'uvu/assert';
import { PASSWORD, assertError } from './auth.ts';
import type { HttpResult, TestService } from './service.ts';

// The password policy as its suites see it (tests/auth.password-policy.*): what a refusal says,
// the common passwords it knows, the passwords a suite tried (none may reach the log), and a
// stand-in for the breached-password range API.

export const COMMON = 'is one of the most common passwords: choose another';
export const PERSONAL = 'must not contain your e-mail address or name';
export const BREACHED = 'appears in a known data breach: choose another';
/** A password every rule takes. */
export const GOOD = 'a sturdy new passphrase';

/** The package's ranked list of common passwords. */
export const RANKED = dictionary['passwords-common'];
/** One from deep in the list (past rank 9,000) that the length rule alone would let through. */
export const DEEP = RANKED.slice(9000).find((password) => password.length >= 8 && /^[a-z0-9]+$/.test(password))!;
export const COMMON_PASSWORDS = ['password1', 'qwertyuiop', DEEP, 'PassWord1', 'QWERTYuiop', DEEP.toUpperCase()];

export const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();

/** A 400 VALIDATION_FAILED with one issue: `field` and `message`. */
export function assertRefused(result: HttpResult, field: string, message: string, label = ''): void {
  assertError(result, 400, 'VALIDATION_FAILED');
  assert.equal(result.body.issues, [{ path: field, message }], `${label}: ${result.text}`);
  assert.is(result.body.message, `${field} ${message}.`);
}

/** The passwords a suite sends (`add` each one), and the check that its service's log holds none of them, nor their SHA-1. */
export function triedPasswords() {
  const tried = new Set<string>([PASSWORD, GOOD, ...COMMON_PASSWORDS]);
  return {
    tried,
    add(password: string): string {
      tried.add(password);
      return password;
    },
    assertNotLogged(service: TestService): void {
      const log = service.logs.text();
      for (const password of tried) {
        assert.not.ok(log.includes(password), `the log holds a tried password: ${password}`);
        assert.not.ok(log.includes(sha1(password)), `the log holds the SHA-1 of ${password}`);
      }
    },
  };
}

// A stand-in for the range API: GET /range/<5 hex> answers `SUFFIX:COUNT` lines, padded with
// lines of count 0 as Add-Padding asks. `mode` makes it hang or fail.

type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string };

/** The stand-in on a port of its own: `counts` holds the SHA-1s it lists, with their counts. */
export function startRangeApi() {
  const seen: Seen[] = [];
  const counts = new Map<string, number>();
  const state = { mode: 'answer' as 'answer' | 'hang' | 'fail' };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (state.mode === 'hang') return;
      if (state.mode === 'fail') return void res.writeHead(500).end('upstream trouble');
      const prefix = /^\/range\/([0-9A-F]{5})$/.exec(req.url ?? '')?.[1];
      if (!prefix) return void res.writeHead(400).end();
      const lines = [...counts].filter(([hash]) => hash.startsWith(prefix)).map(([hash, count]) => `${hash.slice(5)}:${count}`);
      for (let i = 0; i < 40; i++) lines.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.sort().join('\r\n'));
    });
  });
  return new Promise<{ url: string; seen: Seen[]; counts: Map<string, number>; state: typeof state; close(): Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        seen,
        counts,
        state,
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}
