import { createHash } from 'node:crypto';
import * as assert from 'uvu/assert';
import { request, startTestApp, type HttpResult, type TestService } from './service.ts';
import { linkToken, type ReceivedMail } from './smtp.ts';
import { PATIENCE_MS } from './wait.ts';

export const AUTH = '/api/v1/auth';
export const PASSWORD = 'correct horse battery staple';

export type Account = { email: string; password: string; token: string; apiKey: string; user: any };

/** Generous: mails go out in the background, and a loaded CI machine can be slow. */
export const MAIL_TIMEOUT_MS = PATIENCE_MS;

/**
 * The next mail to `email` after the `seen` ones already in the inbox; with `pattern`, the
 * next one whose subject or text matches it (notices go out in the background, in any order).
 */
export async function nextMail(service: TestService, email: string, seen: number, pattern?: RegExp): Promise<ReceivedMail> {
  return service.smtp.waitFor(
    email,
    (mail) => service.smtp.mailsTo(email).indexOf(mail) >= seen && (!pattern || pattern.test(`${mail.subject}\n${mail.text}`)),
    MAIL_TIMEOUT_MS,
  );
}

export async function register(service: TestService, fields: Record<string, unknown>): Promise<HttpResult> {
  return request(service.url, 'POST', `${AUTH}/register`, { json: fields });
}

/** Registers and returns the token of the verification mail that registration sent. */
export async function registerForToken(
  service: TestService,
  email: string,
  fields: Record<string, unknown> = {},
): Promise<string> {
  const seen = service.smtp.mailsTo(email).length;
  const result = await register(service, { email, password: PASSWORD, name: 'Test User', ...fields });
  assert.is(result.status, 201, result.text);
  return linkToken(await nextMail(service, email, seen));
}

export async function login(service: TestService, email: string, password = PASSWORD): Promise<HttpResult> {
  return request(service.url, 'POST', `${AUTH}/login`, { json: { email, password } });
}

/** A verified, logged-in account, made through the public REST routes only. */
export async function registerAndVerify(
  service: TestService,
  email: string,
  fields: Record<string, unknown> = {},
): Promise<Account> {
  const password = typeof fields.password === 'string' ? fields.password : PASSWORD;
  const token = await registerForToken(service, email, fields);
  const verified = await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token } });
  assert.is(verified.status, 200, verified.text);
  const loggedIn = await login(service, email, password);
  assert.is(loggedIn.status, 200, loggedIn.text);
  return { email, password, token: loggedIn.body.token, apiKey: loggedIn.body.user.api_key, user: loggedIn.body.user };
}

/** A verified account given the role admin, as `npm run admin -- promote` would. */
export async function registerAdmin(service: TestService, email: string): Promise<Account> {
  const account = await registerAndVerify(service, email);
  await service.deps.db.query(`UPDATE accounts SET role = 'admin' WHERE id = $1`, [account.user.id]);
  return { ...account, user: { ...account.user, role: 'admin' } };
}

/** A suite of the operator's tools: its service (configured by `env`), an admin, and a plain user. */
export type WithAdmin = { service: TestService; admin: Account; user: Account };

/** Starts a service with an admin and a plain user in it, as the operator suites do; the service stops again if either sign-up fails. */
export async function startWithAdmin(env: Record<string, string> = {}): Promise<WithAdmin> {
  const service = await startTestApp(env);
  try {
    return { service, admin: await registerAdmin(service, 'operator@example.com'), user: await registerAndVerify(service, 'just.a.user@example.com') };
  } catch (error) {
    await service.close();
    throw error;
  }
}

export const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

export async function me(service: TestService, headers: Record<string, string>): Promise<HttpResult> {
  return request(service.url, 'GET', `${AUTH}/me`, { headers });
}

/** The fields some codes carry beside code and message, for the caller to act on. */
const DETAILS: Record<string, string[]> = { MFA_REQUIRED: ['methods', 'mfa_token'], STEP_UP_REQUIRED: ['methods'], REAUTH_REQUIRED: ['reauth_url'] };

/** Asserts the error body (docs/API.md, Errors) exactly: `{ success: false, code, message, issues? }`, plus its code's details. */
export function assertError(result: HttpResult, status: number, code: string): void {
  assert.is(result.status, status, `expected ${status} ${code}, got ${result.status}: ${result.text}`);
  const body = result.body;
  assert.ok(body && typeof body === 'object', `error body is JSON: ${result.text}`);
  const keys = Object.keys(body).sort();
  const expected = ['code', 'message', 'success', ...(body.issues === undefined ? [] : ['issues']), ...(DETAILS[code] ?? [])];
  assert.equal(keys, expected.sort());
  assert.is(body.success, false);
  assert.is(body.code, code);
  assert.type(body.message, 'string');
  assert.ok(body.message.length > 0);
  if (body.issues !== undefined) {
    assert.ok(Array.isArray(body.issues) && body.issues.length > 0, 'issues is a non-empty array');
    for (const issue of body.issues) {
      assert.equal(Object.keys(issue).sort(), ['message', 'path']);
      assert.type(issue.path, 'string');
      assert.type(issue.message, 'string');
    }
  }
}

/** The issue paths of a VALIDATION_FAILED body. */
export function issuePaths(result: HttpResult): string[] {
  return (result.body?.issues ?? []).map((issue: { path: string }) => issue.path);
}

/**
 * An HTTP request from a chosen client address, so per-IP rules can be driven from several
 * "clients" without trusting X-Forwarded-For: for a service started in process (startTestApp),
 * which takes the address as the socket's.
 */
export function requestFrom(
  ip: string,
  base: string,
  method: string,
  path: string,
  options: { json?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  return request(base, method, path, { ...options, from: ip });
}

/** A login attempt from a chosen client address (wrong password unless one is given). */
export function loginFrom(service: TestService, ip: string, email: string, password = 'wrong password', headers: Record<string, string> = {}): Promise<HttpResult> {
  return requestFrom(ip, service.url, 'POST', `${AUTH}/login`, { json: { email, password }, headers });
}

/** The value of a cookie the answer sets, e.g. `svc_device`. */
export function setCookieValue(result: HttpResult, name: string): string | undefined {
  const cookie = result.headers.getSetCookie().find((line) => line.startsWith(`${name}=`));
  return cookie?.slice(name.length + 1).split(';')[0];
}

/** A mailed token of `purpose` is in email_tokens once, as its SHA-256 only: never its text or bytes. */
export async function assertTokenStoredHashed(service: TestService, accountId: number, purpose: string, token: string): Promise<void> {
  const rows = await service.deps.db.query<{ row: string; hash: string }>(
    "SELECT row_to_json(t)::text AS row, encode(token_hash, 'hex') AS hash FROM email_tokens t WHERE account_id = $1 AND purpose = $2",
    [accountId, purpose],
  );
  assert.is(rows.length, 1);
  assert.is(rows[0].hash, createHash('sha256').update(token).digest('hex'));
  assert.not.match(rows[0].row, token);
  assert.not.match(rows[0].row, Buffer.from(token, 'base64url').toString('hex'));
}

/** Whether a mailed token has been used (or voided); it must have a row. */
export async function tokenUsed(service: TestService, token: string): Promise<boolean> {
  const hash = createHash('sha256').update(token).digest();
  const [row] = await service.deps.db.query<{ used: boolean }>('SELECT used_at IS NOT NULL AS used FROM email_tokens WHERE token_hash = $1', [hash]);
  assert.ok(row, 'the token has a row');
  return row.used;
}

/** A page a mailed link opens: HTML, never cached, no Referer, a form that posts `token` back to `action`. */
export function assertTokenPage(shown: HttpResult, action: string, token: string): void {
  assert.is(shown.status, 200);
  assert.match(shown.headers.get('content-type') ?? '', 'text/html');
  assert.is(shown.headers.get('cache-control'), 'no-store');
  assert.is(shown.headers.get('referrer-policy'), 'no-referrer');
  assert.match(shown.text, `<form method="post" action="${action}">`);
  assert.match(shown.text, `<input type="hidden" name="token" value="${token}"/>`);
}
