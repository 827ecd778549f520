import { createHash, createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { jwtKeyId } from '../server/src/lib/jwt.ts';
import { AUTH, assertError, bearer, me, registerAndVerify, type Account } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';

const test = suite<{ service: TestService; alice: Account; bob: Account }>('REST credentials: JWT, API key, cookie');

test.before(async (context) => {
  context.service = await startTestApp();
  context.alice = await registerAndVerify(context.service, 'alice@example.com');
  context.bob = await registerAndVerify(context.service, 'bob@example.com');
});
test.after(async ({ service }) => {
  await service?.close();
});

const seconds = (service: TestService) => Math.floor(service.clock.now().getTime() / 1000);
const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT signed with the suite's own JWT_SECRET; each test bends one property. */
function forge(service: TestService, claims: Record<string, unknown>, alg = 'HS256') {
  const iat = seconds(service);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setIssuedAt((claims.iat as number) ?? iat)
    .setExpirationTime((claims.exp as number) ?? iat + 3600)
    .sign(new TextEncoder().encode(service.env.JWT_SECRET));
}

async function assertRejected(service: TestService, token: string, label: string) {
  const result = await me(service, bearer(token));
  assert.is(result.status, 401, `${label}: ${result.text}`);
  assertError(result, 401, 'UNAUTHORIZED');
  assert.is(result.headers.get('www-authenticate'), 'Bearer', label);
}

test('the session JWT: HS256 with a kid naming its secret; sub, sid, iat, exp, iss and aud', async ({ service, alice }) => {
  assert.equal(decodeProtectedHeader(alice.token), { alg: 'HS256', typ: 'JWT', kid: jwtKeyId(Buffer.from(service.env.JWT_SECRET)) });
  const claims = decodeJwt(alice.token);
  assert.equal(Object.keys(claims).sort(), ['aud', 'exp', 'iat', 'iss', 'sid', 'sub']);
  assert.is(claims.sub, String(alice.user.id));
  assert.match(String(claims.sid), /^[0-9a-f-]{36}$/);
  assert.is(claims.iss, service.env.PUBLIC_URL);
  assert.is(claims.aud, service.env.PUBLIC_URL);
  assert.is(claims.iat, seconds(service));
  assert.is(claims.exp! - claims.iat!, 30 * 24 * 3600);
  const [session] = await service.deps.db.query<{ account_id: number }>('SELECT account_id FROM sessions WHERE id = $1', [claims.sid]);
  assert.is(session.account_id, alice.user.id);
});

test('a token forged with the right secret, issuer and a live session is accepted (the forger is sound)', async ({ service, alice }) => {
  const { sid } = decodeJwt(alice.token);
  const token = await new SignJWT({ sid })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(String(alice.user.id))
    .setIssuer(service.env.PUBLIC_URL)
    .setIssuedAt(seconds(service))
    .setExpirationTime(seconds(service) + 60)
    .sign(new TextEncoder().encode(service.env.JWT_SECRET));
  assert.is((await me(service, bearer(token))).body.user.id, alice.user.id);
});

test('other algorithms, bad signatures, wrong issuers, expired and malformed tokens: 401', async ({ service, alice, bob }) => {
  const { sid } = decodeJwt(alice.token);
  const [header, payload, signature] = alice.token.split('.');
  const good = { sub: String(alice.user.id), sid, iss: service.env.PUBLIC_URL };
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
  const cases: Array<[string, string]> = [
    ['alg none', `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`],
    ['alg none, signature kept', `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`],
    ['HS512 with the same secret', await forge(service, good, 'HS512')],
    ['RS256 header, HMAC signature', `${b64url({ alg: 'RS256', typ: 'JWT' })}.${payload}.${signature}`],
    ['RS256 signed with some RSA key', await new SignJWT(good).setProtectedHeader({ alg: 'RS256' }).setIssuedAt().setExpirationTime('1h').sign(privateKey)],
    ['a flipped signature byte', `${header}.${payload}.${flipped}`],
    ['no signature', `${header}.${payload}.`],
    ['payload swapped to another account', `${header}.${b64url({ ...decodeJwt(alice.token), sub: String(bob.user.id) })}.${signature}`],
    ['signed with another secret', await new SignJWT(good).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode('x'.repeat(48)))],
    ['a wrong issuer', await forge(service, { ...good, iss: 'https://evil.example' })],
    ['no issuer', await forge(service, { sub: good.sub, sid })],
    ['expired', await forge(service, { ...good, iat: seconds(service) - 7200, exp: seconds(service) - 3600 })],
    ['no sid', await forge(service, { sub: good.sub, iss: good.iss })],
    ['a sid that is not a uuid', await forge(service, { ...good, sid: "x' OR '1'='1" })],
    ['an unknown session', await forge(service, { ...good, sid: randomUUID() })],
    ['another account with this session', await forge(service, { ...good, sub: String(bob.user.id) })],
    ['sub not a number', await forge(service, { ...good, sub: 'alice' })],
    ['garbage', 'not-a-jwt'],
    ['three empty parts', '..'],
  ];
  for (const [label, token] of cases) await assertRejected(service, token, label);
});

test('no credentials, an empty Bearer or another scheme: 401 with WWW-Authenticate: Bearer', async ({ service, alice }) => {
  const variants: Array<Record<string, string>> = [{}, { authorization: 'Bearer' }, { authorization: 'Bearer ' }, { authorization: `Basic ${alice.token}` }, { authorization: alice.token }];
  for (const headers of variants) {
    const result = await me(service, headers);
    assertError(result, 401, 'UNAUTHORIZED');
    assert.is(result.headers.get('www-authenticate'), 'Bearer');
  }
});

test('the API key: 64 lowercase hex, one per account, works as Bearer, the same from login and me', async ({ service, alice, bob }) => {
  assert.match(alice.apiKey, /^[0-9a-f]{64}$/);
  assert.is.not(alice.apiKey, bob.apiKey);
  const viaKey = await me(service, bearer(alice.apiKey));
  assert.is(viaKey.status, 200);
  assert.equal(viaKey.body, { success: true, user: alice.user });
  assert.is((await me(service, bearer(alice.token))).body.user.api_key, alice.apiKey);
  const relogin = await request(service.url, 'POST', `${AUTH}/login`, { json: { email: alice.email, password: alice.password } });
  assert.is(relogin.body.user.api_key, alice.apiKey);
  await assertRejected(service, 'f'.repeat(64), 'an unknown API key');
  await assertRejected(service, alice.apiKey.slice(1), 'a truncated API key');
});

test('the API key is not stored in plaintext, nor as a bare SHA-256', async ({ service, alice }) => {
  const plain = alice.apiKey;
  const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
  const forbidden = [plain, plain.toUpperCase(), sha(plain), sha(Buffer.from(plain, 'hex')), Buffer.from(plain, 'hex').toString('base64')];
  const tables = await service.deps.db.query<{ name: string }>(
    "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'",
  );
  for (const { name } of tables) {
    const rows = await service.deps.db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${name} t`);
    for (const { row } of rows) for (const value of forbidden) assert.not.ok(row.toLowerCase().includes(value.toLowerCase()), `${name} holds ${value}`);
  }
  const [account] = await service.deps.db.query<{ api_key_hash: Buffer }>('SELECT api_key_hash FROM accounts WHERE id = $1', [alice.user.id]);
  assert.is.not(account.api_key_hash.toString('hex'), sha(plain));
  assert.is.not(account.api_key_hash.toString('hex'), createHmac('sha256', '').update(plain).digest('hex'));
});

test('the svc_token cookie authenticates when there is no Authorization header', async ({ service, alice }) => {
  assert.is((await me(service, { cookie: `svc_token=${alice.token}` })).body.user.id, alice.user.id);
  assert.is((await me(service, { cookie: `theme=dark; svc_token=${alice.token}; lang=en` })).body.user.id, alice.user.id);
  assertError(await me(service, { cookie: `other_token=${alice.token}` }), 401, 'UNAUTHORIZED');
  assertError(await me(service, { cookie: 'svc_token=' }), 401, 'UNAUTHORIZED');
});

test('an Authorization header wins over the cookie, even when it is invalid', async ({ service, alice, bob }) => {
  const cookie = `svc_token=${alice.token}`;
  assert.is((await me(service, { cookie, ...bearer(bob.apiKey) })).body.user.id, bob.user.id);
  assert.is((await me(service, { cookie, ...bearer(bob.token) })).body.user.id, bob.user.id);
  assertError(await me(service, { cookie, ...bearer('invalid') }), 401, 'UNAUTHORIZED');
});

test('a revoked session: 401 with WWW-Authenticate: Bearer, by header and by cookie', async ({ service }) => {
  const carol = await registerAndVerify(service, 'carol@example.com');
  assert.is((await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(carol.token) })).status, 200);
  await assertRejected(service, carol.token, 'revoked');
  assertError(await me(service, { cookie: `svc_token=${carol.token}` }), 401, 'UNAUTHORIZED');
});

test('a session JWT stops working after JWT_TTL on the service clock; the API key does not', async ({ service }) => {
  const dave = await registerAndVerify(service, 'dave@example.com');
  const start = service.clock.now();
  try {
    // Used every ten days, so that SESSION_IDLE_TIMEOUT (14 days) does not end it first.
    for (const days of [10, 10]) {
      service.clock.advance(days * 24 * 3600 * 1000);
      assert.is((await me(service, bearer(dave.token))).status, 200);
    }
    service.clock.advance(10 * 24 * 3600 * 1000 - 60_000);
    assert.is((await me(service, bearer(dave.token))).status, 200);
    service.clock.advance(61_000);
    await assertRejected(service, dave.token, 'expired by the clock');
    assert.is((await me(service, bearer(dave.apiKey))).status, 200);
  } finally {
    // The other tests' sessions live on the clock they were made on.
    service.clock.set(start);
  }
});

test.run();
