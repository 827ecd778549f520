import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { calculateJwkThumbprint, createRemoteJWKSet, customFetch, decodeProtectedHeader, exportJWK, jwtVerify, SignJWT, type JWTVerifyGetKey } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGatehouseClient, TRPCClientError } from '../client/src/index.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, assertError, bearer, issuePaths, login, me, registerAdmin, registerAndVerify, type Account } from './helpers/auth.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { createBrowser, signInWith, startServiceWithProviders, type WithProviders } from './helpers/identity-providers.ts';
import { request, startTestApp, testFetch, withGlobalTestFetch, type HttpResult, type TestService } from './helpers/service.ts';
import { data, trpcOver } from './helpers/trpc-http.ts';
import { createSoftAuthenticator } from './helpers/webauthn.ts';

// Access tokens for the platform's other services, judged as such a service judges them: a
// verifier that owes nothing to this repository (plain jose, the key set fetched over HTTP),
// tokens minted by every kind of credential and sign-in, and what may not mint.

type Context = { env: WithProviders; service: TestService };
const test = checkedForFaults(suite<Context>('access tokens: minted from any credential, checked anywhere with the published keys'));

const AUDIENCES = ['bookings', 'https://billing.example.com'];
const TTL_SECONDS = 300;
const IDLE_MS = 60 * 60_000;

test.before(async (context) => {
  context.env = await startServiceWithProviders({ ACCESS_TOKEN_AUDIENCES: AUDIENCES.join(','), SESSION_IDLE_TIMEOUT: '1h' });
  context.service = context.env.service;
});
test.after(async ({ env }) => {
  await env?.close();
});

const JWKS_PATH = '/.well-known/jwks.json';

/** The service's JWKS as a verifier fetches it (over testFetch, which reaches the in-process service). */
const remoteKeys = (service: TestService) => createRemoteJWKSet(new URL(`${service.url}${JWKS_PATH}`), { [customFetch]: testFetch });
const post = (service: TestService, path: string, headers: Record<string, string>, json?: unknown): Promise<HttpResult> =>
  request(service.url, 'POST', `${AUTH}/${path}`, { headers: { 'content-type': 'application/json', ...headers }, json });
const mint = (service: TestService, credential: string, audience = 'bookings') => post(service, 'token', bearer(credential), { audience });

/** A token minted by `credential`, which must be minted. */
async function minted(service: TestService, credential: string, audience = 'bookings'): Promise<string> {
  const answer = await mint(service, credential, audience);
  assert.is(answer.status, 200, answer.text);
  return answer.body.access_token;
}

/** Another service of the platform: the key set from the URL it is given, jose's checks, and nothing of ours. */
function verifierOf(service: TestService, keys: JWTVerifyGetKey = remoteKeys(service)) {
  return (token: string, audience = 'bookings') =>
    jwtVerify(token, keys, { issuer: service.url, audience, typ: 'at+jwt', algorithms: ['EdDSA', 'ES256'], currentDate: service.clock.now() });
}

/** The error a check throws, by its jose code; fails when the check passes. */
async function refusal(check: Promise<unknown>): Promise<string> {
  try {
    await check;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
  throw new Error('the token was accepted');
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

test('a fresh token passes a plain jose check against the published keys: RFC 9068 header, the claims listed, nothing secret', async ({ service }) => {
  const account = await registerAndVerify(service, 'tokens.fresh@example.com');
  const answer = await mint(service, account.token);
  assert.is(answer.status, 200, answer.text);
  assert.equal(Object.keys(answer.body).sort(), ['access_token', 'expires_in', 'success', 'token_type']);
  assert.is(answer.body.token_type, 'Bearer');
  assert.is(answer.body.expires_in, TTL_SECONDS);
  assert.is(answer.headers.get('cache-control'), 'no-store');

  const jwks = await request(service.url, 'GET', JWKS_PATH);
  assert.is(jwks.status, 200);
  assert.is(jwks.headers.get('cache-control'), 'public, max-age=300');
  assert.match(jwks.headers.get('content-type') ?? '', 'application/json');
  assert.is(jwks.body.keys.length, 1);
  const [key] = jwks.body.keys;
  assert.equal(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x'], 'public members only');
  assert.equal([key.kty, key.crv, key.alg, key.use], ['OKP', 'Ed25519', 'EdDSA', 'sig']);
  assert.is(key.kid, await calculateJwkThumbprint(key), "the kid is the key's RFC 7638 thumbprint");

  const { payload, protectedHeader } = await verifierOf(service)(answer.body.access_token);
  assert.equal(protectedHeader, { alg: 'EdDSA', typ: 'at+jwt', kid: key.kid });
  const [session] = (await request(service.url, 'GET', `${AUTH}/sessions`, { headers: bearer(account.token) })).body.sessions;
  const now = Math.floor(service.clock.now().getTime() / 1000);
  assert.equal(Object.keys(payload).sort(), ['amr', 'aud', 'client_id', 'email', 'email_verified', 'exp', 'iat', 'iss', 'jti', 'plan', 'role', 'sid', 'sub']);
  assert.equal(
    { ...payload, jti: undefined },
    { iss: service.url, sub: String(account.user.id), aud: 'bookings', client_id: 'gatehouse', iat: now, exp: now + TTL_SECONDS, jti: undefined, sid: session.id, role: 'user', plan: 'free', email: account.email, email_verified: true, amr: ['pwd'] },
  );
  assert.match(String(payload.jti), /^[0-9a-f-]{36}$/);
  assert.is.not((await verifierOf(service)(await minted(service, account.token))).payload.jti, payload.jti, 'each token has its own jti');
  const other = await verifierOf(service)(await minted(service, account.token, AUDIENCES[1]), AUDIENCES[1]);
  assert.is(other.payload.aud, AUDIENCES[1]);
  for (const secret of [account.token, account.apiKey, account.password]) assert.not.match(answer.body.access_token + JSON.stringify(payload), secret);
});

test('the check refuses another audience, an expired token, a key not published, a changed claim, and alg swaps (HS256 with the public key, none)', async ({ service }) => {
  const account = await registerAndVerify(service, 'tokens.refused@example.com');
  const token = await minted(service, account.token);
  const verify = verifierOf(service);
  const claims = (await verify(token)).payload;
  const { kid } = decodeProtectedHeader(token);
  assert.is(await refusal(verify(token, AUDIENCES[1])), 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'another audience');

  // A key of someone else's, under its own kid or under the published one.
  const { privateKey } = generateKeyPairSync('ed25519');
  const foreignKid = await calculateJwkThumbprint(await exportJWK(privateKey));
  const signedBy = (header: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', ...header }).sign(privateKey);
  assert.is(await refusal(verify(await signedBy({ kid: foreignKid }))), 'ERR_JWKS_NO_MATCHING_KEY');
  assert.is(await refusal(verify(await signedBy({ kid }))), 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED');

  // The published key's own bytes as an HMAC secret: its x, its JWK, its PEM.
  const published = (await request(service.url, 'GET', JWKS_PATH)).body.keys[0];
  const pem = createPublicKey({ key: published, format: 'jwk' }).export({ format: 'pem', type: 'spki' }) as string;
  for (const secret of [Buffer.from(published.x, 'base64url'), Buffer.from(JSON.stringify(published)), Buffer.from(pem)]) {
    const forged = await new SignJWT({ ...claims, role: 'admin' }).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid }).sign(secret);
    assert.is(await refusal(verify(forged)), 'ERR_JOSE_ALG_NOT_ALLOWED', 'HS256 is no algorithm of these keys');
    // Even a check that forgot to list algorithms finds no HMAC key in the set.
    assert.ok(await refusal(jwtVerify(forged, remoteKeys(service), { currentDate: service.clock.now() })));
    assertError(await me(service, bearer(forged)), 401, 'UNAUTHORIZED');
  }
  const unsigned = `${b64({ alg: 'none', typ: 'at+jwt', kid })}.${b64({ ...claims, role: 'admin' })}.`;
  assert.is(await refusal(verify(unsigned)), 'ERR_JOSE_ALG_NOT_ALLOWED');
  assert.ok(await refusal(jwtVerify(unsigned, remoteKeys(service), { currentDate: service.clock.now() })));
  assertError(await me(service, bearer(unsigned)), 401, 'UNAUTHORIZED');
  const [header, , signature] = token.split('.');
  assert.is(await refusal(verify(`${header}.${b64({ ...claims, role: 'admin' })}.${signature}`)), 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'a changed claim');

  // An access token is no credential here: only a session JWT or an API key is.
  assertError(await me(service, bearer(token)), 401, 'UNAUTHORIZED');
  assertError(await mint(service, token), 401, 'UNAUTHORIZED');

  // Good until its exp on the test clock, and refused from then on.
  service.clock.advance((TTL_SECONDS - 1) * 1000);
  assert.ok(await verify(token));
  service.clock.advance(1000);
  assert.is(await refusal(verify(token)), 'ERR_JWT_EXPIRED');
  assert.ok(await verify(await minted(service, account.token)), 'the session mints a new one');
});

test('a session logged out, revoked by an admin or idle past SESSION_IDLE_TIMEOUT cannot mint; a token it minted lives until its exp', async ({ service }) => {
  const admin = await registerAdmin(service, 'tokens.admin@example.com');
  const account = await registerAndVerify(service, 'tokens.revoked@example.com');
  const verify = verifierOf(service);

  const before = await minted(service, account.token);
  assert.is((await post(service, 'logout', bearer(account.token))).status, 200);
  assertError(await mint(service, account.token), 401, 'UNAUTHORIZED');
  assert.ok(await verify(before), 'issued before the logout: good until its exp');

  const second = (await login(service, account.email)).body.token;
  await minted(service, second);
  const revoked = await request(service.url, 'POST', `/api/v1/admin/accounts/${account.user.id}/revoke-sessions`, { headers: bearer(admin.token), json: {} });
  assert.is(revoked.status, 200, revoked.text);
  assertError(await mint(service, second), 401, 'UNAUTHORIZED');

  const third = (await login(service, account.email)).body.token;
  await minted(service, third);
  service.clock.advance(IDLE_MS - 60_000);
  await minted(service, third);
  // Minting is a use of the session, as any request is: idle is counted from the last one.
  service.clock.advance(IDLE_MS - 60_000);
  await minted(service, third);
  service.clock.advance(IDLE_MS);
  assertError(await mint(service, third), 401, 'UNAUTHORIZED');
  // The API key is no session: it still mints.
  await minted(service, account.apiKey);
});

test('an API key mints a token without sid, amr ["key"]; a rotated key and a deleted account cannot', async ({ service }) => {
  const account = await registerAndVerify(service, 'tokens.key@example.com');
  const { payload } = await verifierOf(service)(await minted(service, account.apiKey));
  assert.is(payload.sid, undefined);
  assert.equal(payload.amr, ['key']);
  assert.is(payload.sub, String(account.user.id));

  const rotated = await post(service, 'api-key/rotate', bearer(account.token), {});
  assert.is(rotated.status, 200, rotated.text);
  assertError(await mint(service, account.apiKey), 401, 'UNAUTHORIZED');
  assert.equal((await verifierOf(service)(await minted(service, rotated.body.api_key))).payload.amr, ['key']);
  // In a rotation's grace period the previous key still works, here as everywhere.
  const graced = await post(service, 'api-key/rotate', bearer(account.token), { grace_seconds: 60 });
  assert.is(graced.status, 200, graced.text);
  assert.equal((await verifierOf(service)(await minted(service, rotated.body.api_key))).payload.sub, String(account.user.id));
  service.clock.advance(61_000);
  assertError(await mint(service, rotated.body.api_key), 401, 'UNAUTHORIZED');
  const current = graced.body.api_key;

  const deleted = await post(service, 'account/delete', bearer(account.token), { password: PASSWORD });
  assert.is(deleted.status, 200, deleted.text);
  assertError(await mint(service, current), 401, 'UNAUTHORIZED');
  assertError(await mint(service, account.token), 401, 'UNAUTHORIZED');
});

/** An account with the authenticator app on: its secret and recovery codes. */
async function withTotp(service: TestService, account: Account): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await post(service, 'mfa/totp/setup', bearer(account.token), { password: PASSWORD });
  assert.is(setup.status, 200, setup.text);
  const enabled = await post(service, 'mfa/totp/enable', bearer(account.token), { code: totpCodeAt(setup.body.secret, service.clock.now()) });
  assert.is(enabled.status, 200, enabled.text);
  service.clock.advance(30_000);
  return { secret: setup.body.secret, recoveryCodes: enabled.body.recovery_codes };
}

/** The second step of a sign-in, with a code or a passkey's answer: the session token. */
async function secondStep(service: TestService, mfaToken: string, proof: Record<string, unknown>): Promise<string> {
  const answer = await post(service, 'login/mfa', {}, { mfa_token: mfaToken, ...proof });
  assert.is(answer.status, 200, answer.text);
  return answer.body.token;
}

test('amr says how the session began: password, a second factor after it, a passkey alone, an identity provider', async ({ service, env }) => {
  const amrOf = async (token: string) => (await verifierOf(service)(await minted(service, token))).payload.amr;
  const plain = await registerAndVerify(service, 'amr.password@example.com');
  assert.equal(await amrOf(plain.token), ['pwd']);

  const totp = await registerAndVerify(service, 'amr.totp@example.com');
  const { secret, recoveryCodes } = await withTotp(service, totp);
  const withCode = await secondStep(service, (await login(service, totp.email)).body.mfa_token, { code: totpCodeAt(secret, service.clock.now()) });
  assert.equal(await amrOf(withCode), ['pwd', 'otp', 'mfa']);
  const withRecovery = await secondStep(service, (await login(service, totp.email)).body.mfa_token, { code: recoveryCodes[0] });
  assert.equal(await amrOf(withRecovery), ['pwd', 'otp', 'mfa']);
  assert.equal(await amrOf(totp.token), ['pwd'], 'the session from before the factor was turned on');

  const passkey = await registerAndVerify(service, 'amr.passkey@example.com');
  const authenticator = createSoftAuthenticator(service.url);
  const options = await post(service, 'mfa/passkeys/options', bearer(passkey.token), { password: PASSWORD });
  assert.is((await post(service, 'mfa/passkeys', bearer(passkey.token), { response: authenticator.register(options.body.options) })).status, 200);
  const alone = await post(service, 'login/passkey', {}, { response: authenticator.authenticate((await post(service, 'login/passkey/options', {})).body.options) });
  assert.is(alone.status, 200, alone.text);
  assert.equal(await amrOf(alone.body.token), ['hwk']);
  const mfaToken = (await login(service, passkey.email)).body.mfa_token;
  const afterPassword = await secondStep(service, mfaToken, { response: authenticator.authenticate((await post(service, 'login/passkey/options', {}, { mfa_token: mfaToken })).body.options) });
  assert.equal(await amrOf(afterPassword), ['pwd', 'hwk', 'mfa']);

  env.op.people.set('sub-amr', { email: 'amr.provider@example.com', email_verified: true, name: 'Amr' });
  const browser = createBrowser();
  assert.is((await signInWith(service, browser, 'acme', 'sub-amr')).status, 302);
  assert.equal(await amrOf(browser.cookie(service.url, 'svc_token')!), ['fed']);

  // A provider, then the second step: `corp` is trusted with the address, and links after the code.
  env.op.people.set('sub-amr-totp', { email: totp.email, email_verified: true });
  const twoSteps = createBrowser();
  assert.is((await signInWith(service, twoSteps, 'corp', 'sub-amr-totp')).location, `${service.url}/login/mfa`);
  service.clock.advance(30_000);
  const provided = await secondStep(service, twoSteps.cookie(service.url, 'svc_mfa')!.split('.')[0], { code: totpCodeAt(secret, service.clock.now()) });
  assert.equal(await amrOf(provided), ['fed', 'otp', 'mfa']);
  const sessions = (await request(service.url, 'GET', `${AUTH}/sessions`, { headers: bearer(provided) })).body.sessions;
  assert.is(sessions.find((session: { current: boolean }) => session.current).via, 'corp', 'via is kept beside the second step');
});

test('refusals: no credential 401, an audience not listed or PUBLIC_URL 400 on audience, garbage 400, a cookie from another site 403; over tRPC alike', async ({ service }) => {
  const account = await registerAndVerify(service, 'tokens.garbage@example.com');
  assertError(await post(service, 'token', {}, { audience: 'bookings' }), 401, 'UNAUTHORIZED');
  assertError(await post(service, 'token', bearer('not-a-jwt'), { audience: 'bookings' }), 401, 'UNAUTHORIZED');
  for (const audience of ['payments', 'Bookings', 'bookings ', service.url, `${service.url}/`]) {
    const refused = await mint(service, account.token, audience);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), ['audience'], audience);
  }
  const bodies: Array<[unknown, string[]]> = [
    [{}, ['audience']],
    [{ audience: 'bookings', scope: 'admin' }, ['scope']],
    [{ audience: 42 }, ['audience']],
    [{ audience: ['bookings'] }, ['audience']],
    [{ audience: '' }, ['audience']],
    [{ audience: 'book\u0000ings' }, ['audience']],
    [{ audience: 'bookings\nx' }, ['audience']],
    [{ audience: 'x'.repeat(201) }, ['audience']],
    [[], ['(body)']],
  ];
  for (const [body, paths] of bodies) {
    const refused = await post(service, 'token', bearer(account.token), body);
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(refused), paths, JSON.stringify(body).slice(0, 60));
  }
  assert.is((await request(service.url, 'POST', `${AUTH}/token`, { headers: { ...bearer(account.token), 'content-type': 'text/plain' }, body: 'audience=bookings' })).status, 415);
  assert.is((await post(service, 'token', bearer(account.token), { audience: 'x'.repeat(17 * 1024) })).status, 413);

  const cookie = { cookie: `svc_token=${account.token}` };
  assertError(await post(service, 'token', { ...cookie, origin: 'https://evil.example' }, { audience: 'bookings' }), 403, 'FORBIDDEN');
  assert.is((await post(service, 'token', { ...cookie, origin: service.url }, { audience: 'bookings' })).status, 200, 'from its own site the cookie mints');

  const trpc = trpcOver(service);
  const overTrpc = await trpc.mutation(account, 'auth.accessToken', { audience: 'bookings' });
  assert.is(overTrpc.status, 200, overTrpc.text);
  assert.ok(await verifierOf(service)(data(overTrpc).access_token));
  const unknown = await trpc.mutation(account, 'auth.accessToken', { audience: 'payments' });
  assert.is(unknown.status, 400);
  assert.is(unknown.body.error.data.appCode, 'VALIDATION_FAILED');
  assert.is((await trpc.mutation(undefined, 'auth.accessToken', { audience: 'bookings' })).body.error.data.appCode, 'UNAUTHORIZED');
});

test('minting writes nothing to the database, by JWT or API key, however many tokens', async () => {
  // A gateway alone: a worker's own statements (events out, the queue) would be counted too.
  const service = await startTestApp({ ACCESS_TOKEN_AUDIENCES: 'bookings' }, { role: 'gateway' });
  try {
    await noWriteWhileMinting(service);
  } finally {
    await service.close();
  }
});

async function noWriteWhileMinting(service: TestService): Promise<void> {
  const account = await registerAndVerify(service, 'tokens.nowrite@example.com');
  const { db } = service.deps;
  const statements: string[] = [];
  const query = db.query;
  const transaction = db.transaction;
  db.query = ((text: string | { text: string; name?: string }, values?: unknown[]) => {
    statements.push(typeof text === 'string' ? text : text.name ?? text.text);
    return query.call(db, text as never, values);
  }) as typeof db.query;
  db.transaction = ((work: never) => {
    statements.push('a transaction');
    return transaction.call(db, work);
  }) as typeof db.transaction;
  try {
    for (let round = 0; round < 25; round++) await Promise.all([minted(service, account.token), minted(service, account.apiKey)]);
  } finally {
    db.query = query;
    db.transaction = transaction;
  }
  // The session's last use is written by a timer at most once a minute, for any request
  // (sessions.touches.ts): not by the token, and there may be none in this while.
  assert.ok(statements.some((statement) => statement.startsWith('auth_by_')), 'the credentials were looked up through the spy');
  const writes = statements.filter((statement) => statement !== 'sessions_touch' && !/^(auth_by_|account_by_|SELECT)/i.test(statement.trim()));
  assert.equal(writes, []);
}

test("the guide's TypeScript check (docs/ACCESS-TOKENS.md), run as written, takes a fresh token and refuses the rest", async ({ service }) => {
  const guide = readFileSync(new URL('../docs/ACCESS-TOKENS.md', import.meta.url), 'utf8');
  const code = /<!-- example: receiving-service\.ts -->\n```ts\n([\s\S]*?)\n```/.exec(guide)?.[1];
  assert.ok(code?.includes("const GATEHOUSE = 'https://gatehouse.example.com';"), 'the example names its Gatehouse once');
  // Only where it lives changes: this Gatehouse, and jose from this repository's node_modules.
  const local = code!.replace("'https://gatehouse.example.com'", JSON.stringify(service.url)).replace("from 'jose'", `from ${JSON.stringify(import.meta.resolve('jose'))}`);
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-guide-'));
  try {
    writeFileSync(join(dir, 'receiving-service.ts'), local);
    const { callerOf } = await import(pathToFileURL(join(dir, 'receiving-service.ts')).href);
    const account = await registerAndVerify(service, 'tokens.guide@example.com');
    // The example fetches the JWKS with the global fetch, as a receiving service would.
    await withGlobalTestFetch(async () => {
      const caller = await callerOf(`Bearer ${await minted(service, account.token)}`);
      assert.equal([caller.sub, caller.email, caller.amr], [String(account.user.id), account.email, ['pwd']]);
      assert.is((await callerOf(`bearer ${await minted(service, account.apiKey)}`)).sid, undefined);
      for (const refused of [undefined, '', 'Bearer', `Bearer ${await minted(service, account.token, AUDIENCES[1])}`, `Bearer ${account.token}`, `Bearer ${account.apiKey}`, 'Bearer a.b.c']) {
        assert.is(await callerOf(refused), undefined, String(refused).slice(0, 40));
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the typed client: accessToken(audience) asks once and reuses the token until 30 s before its exp, per audience and credential', async ({ service }) => {
  const account = await registerAndVerify(service, 'tokens.client@example.com');
  const other = await registerAndVerify(service, 'tokens.client.other@example.com');
  let credential = account.token;
  let now = Date.now();
  let asked = 0;
  const client = createGatehouseClient({
    url: `${service.url}/trpc`,
    token: () => credential,
    now: () => now,
    fetch: (input, init) => {
      asked += 1;
      return testFetch(input, init);
    },
  });
  const [first, same] = await Promise.all([client.accessToken('bookings'), client.accessToken('bookings')]);
  assert.is(same, first, 'calls at once share one request');
  assert.is(asked, 1);
  assert.is(await client.accessToken('bookings'), first);
  assert.is(asked, 1);
  assert.is((await verifierOf(service)(first)).payload.sub, String(account.user.id));

  const billing = await client.accessToken(AUDIENCES[1]);
  assert.is((await verifierOf(service)(billing, AUDIENCES[1])).payload.aud, AUDIENCES[1]);
  assert.is(asked, 2);

  now += (TTL_SECONDS - 31) * 1000;
  assert.is(await client.accessToken('bookings'), first, 'still more than 30 s to go');
  now += 1000;
  const renewed = await client.accessToken('bookings');
  assert.is.not(renewed, first, 'renewed 30 s before its exp');
  assert.is(asked, 3);

  credential = other.token;
  const theirs = await client.accessToken('bookings');
  assert.is((await verifierOf(service)(theirs)).payload.sub, String(other.user.id), 'another credential, another token');

  let refused: unknown;
  await client.accessToken('payments').catch((error) => (refused = error));
  assert.instance(refused, TRPCClientError);
  assert.is((refused as TRPCClientError<any>).data?.appCode, 'VALIDATION_FAILED');
  const before = asked;
  await client.accessToken('payments').catch(() => undefined);
  assert.is(asked, before + 1, 'a refusal is not kept');
  // The procedures stay as they were.
  assert.is((await client.auth.me.query()).user.id, other.user.id);
});

test.run();
