import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, createLocalJWKSet, createRemoteJWKSet, customFetch, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runAdminCommand } from '../server/src/cli/program.ts';
import { loadConfig } from '../server/src/config.ts';
import { AUTH, bearer, registerAndVerify, type Account } from './helpers/auth.ts';
import { refusal } from './helpers/config.ts';
import { request, startTestApp, testFetch, type TestService } from './helpers/service.ts';

// The keys that sign access tokens: where they come from (ACCESS_TOKEN_KEYS, or a key of its
// own outside production), what the JWKS publishes of them, how they rotate without a
// failed check, what the configuration refuses, and `tokens keygen`. Nothing of a private
// key may reach an answer or a log.

const test = suite<{ dirs: string[] }>('access-token keys: made, published, rotated, refused, never shown');

test.before((context) => {
  context.dirs = [];
});
test.after(({ dirs }) => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const JWKS_PATH = '/.well-known/jwks.json';

/** The service's JWKS as a verifier fetches it (over testFetch, which reaches the in-process service). */
const remoteKeys = (service: TestService) => createRemoteJWKSet(new URL(`${service.url}${JWKS_PATH}`), { [customFetch]: testFetch });
const jwksOf = async (service: TestService): Promise<JSONWebKeySet> => (await request(service.url, 'GET', JWKS_PATH)).body;
const kidsOf = async (service: TestService) => (await jwksOf(service)).keys.map((key) => key.kid);

async function minted(service: TestService, account: Account, audience = 'bookings'): Promise<string> {
  const answer = await request(service.url, 'POST', `${AUTH}/token`, { headers: bearer(account.apiKey), json: { audience } });
  assert.is(answer.status, 200, answer.text);
  return answer.body.access_token;
}

const checkWith = (service: TestService, keys: JWTVerifyGetKey) => (token: string) =>
  jwtVerify(token, keys, { issuer: service.url, audience: 'bookings', typ: 'at+jwt', algorithms: ['EdDSA', 'ES256'], currentDate: service.clock.now() });

/** Whether `check` accepts `token`. */
async function accepted(check: (token: string) => Promise<unknown>, token: string): Promise<boolean> {
  return check(token).then(
    () => true,
    () => false,
  );
}

/** `npm run admin -- …` in this process, with only `env` for environment. */
async function admin(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCommand(args, { env: { PATH: process.env.PATH ?? '', ...env }, stdout: { write: (text) => void (stdout += text) }, stderr: { write: (text) => void (stderr += text) } });
  return { code, stdout, stderr };
}

/** A new private key from `tokens keygen --json`: the JWK and the kid it says. */
async function keygen(alg = 'EdDSA'): Promise<{ jwk: Record<string, string>; kid: string }> {
  const run = await admin(['tokens', 'keygen', '--alg', alg, '--json']);
  assert.is(run.code, 0, run.stderr);
  const document = JSON.parse(run.stdout);
  return { jwk: document.private_jwk, kid: document.kid };
}

test('outside production a key is made in DATA_DIR (0600), published, kept across restarts, and never in a log or an answer', async () => {
  let service = await startTestApp({ ACCESS_TOKEN_AUDIENCES: 'bookings' });
  try {
    const file = join(service.env.DATA_DIR, 'access-token-key.json');
    assert.is(statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal([stored.kty, stored.crv, stored.alg], ['OKP', 'Ed25519', 'EdDSA']);
    const [key] = (await jwksOf(service)).keys;
    assert.is(key.kid, await calculateJwkThumbprint({ kty: stored.kty, crv: stored.crv, x: stored.x }));
    assert.match(service.logs.text(), /ACCESS_TOKEN_KEYS not set: access tokens are signed with a development key from/);

    const account = await registerAndVerify(service, 'keys.dev@example.com');
    const token = await minted(service, account);
    service = await service.restart({});
    assert.equal(await kidsOf(service), [key.kid], 'the same key after a restart');
    assert.ok(await accepted(checkWith(service, remoteKeys(service)), token), 'its tokens still check');

    const answers = [JSON.stringify(await jwksOf(service)), (await request(service.url, 'GET', '/api/v1/openapi.json')).text, await minted(service, account)];
    for (const text of [...answers, service.logs.text()]) assert.not.ok(text.includes(stored.d), 'the private key is in no answer and no log');
  } finally {
    await service.close();
  }
});

test('without audiences: the JWKS answers {keys: []} (or the keys given, for a rotation prepared ahead), the route 404, no key file', async () => {
  let service = await startTestApp();
  try {
    const jwks = await request(service.url, 'GET', JWKS_PATH);
    assert.is(jwks.status, 200);
    assert.equal(jwks.body, { keys: [] });
    assert.is(jwks.headers.get('cache-control'), 'public, max-age=300');
    assert.is(jwks.headers.get('access-control-allow-origin'), '*');
    assert.not.ok(existsSync(join(service.env.DATA_DIR, 'access-token-key.json')));
    const account = await registerAndVerify(service, 'keys.none@example.com');
    const refused = await request(service.url, 'POST', `${AUTH}/token`, { headers: bearer(account.token), json: { audience: 'bookings' } });
    assert.is(refused.status, 404, refused.text);
    assert.is(refused.body.code, 'NOT_FOUND');
    assert.is((await request(service.url, 'POST', JWKS_PATH)).status, 405);
    assert.is((await request(service.url, 'HEAD', JWKS_PATH)).status, 200);

    const { jwk, kid } = await keygen();
    service = await service.restart({ ACCESS_TOKEN_KEYS: JSON.stringify(jwk) });
    assert.equal(await kidsOf(service), [kid]);
    assert.is((await request(service.url, 'POST', `${AUTH}/token`, { headers: bearer(account.token), json: { audience: 'bookings' } })).status, 404);
  } finally {
    await service.close();
  }
});

test('a rotation fails no check: the new key published second, then signing, the old one kept, then gone', async () => {
  const [first, second] = [await keygen(), await keygen()];
  const keys = (...list: Array<{ jwk: unknown }>) => list.map((key) => JSON.stringify(key.jwk)).join(',');
  let service = await startTestApp({ ACCESS_TOKEN_AUDIENCES: 'bookings', ACCESS_TOKEN_KEYS: keys(first) });
  try {
    const account = await registerAndVerify(service, 'keys.rotation@example.com');
    const oldToken = await minted(service, account);
    assert.is(decodeProtectedHeader(oldToken).kid, first.kid);

    // 1. Published, not signing: a service that fetches the set now keeps both for its max-age.
    service = await service.restart({ ACCESS_TOKEN_KEYS: keys(first, second) });
    assert.equal(await kidsOf(service), [first.kid, second.kid]);
    assert.is(decodeProtectedHeader(await minted(service, account)).kid, first.kid, 'the first key still signs');
    const cached = checkWith(service, createLocalJWKSet(await jwksOf(service)));

    // 2. Signing: tokens of the new key pass the set that service kept, and the old tokens too.
    service = await service.restart({ ACCESS_TOKEN_KEYS: keys(second, first) });
    assert.equal(await kidsOf(service), [second.kid, first.kid]);
    const newToken = await minted(service, account);
    assert.is(decodeProtectedHeader(newToken).kid, second.kid);
    assert.ok(await accepted(cached, newToken), 'a set fetched before the switch checks the new tokens');
    assert.ok(await accepted(cached, oldToken));
    assert.ok(await accepted(checkWith(service, createLocalJWKSet(await jwksOf(service))), oldToken), 'the old key is still published');

    // 3. Gone, once the last token it signed has expired (ACCESS_TOKEN_TTL): it checks nothing more.
    service = await service.restart({ ACCESS_TOKEN_KEYS: keys(second) });
    assert.equal(await kidsOf(service), [second.kid]);
    const fresh = checkWith(service, createLocalJWKSet(await jwksOf(service)));
    assert.ok(await accepted(fresh, await minted(service, account)));
    assert.not.ok(await accepted(fresh, oldToken));
  } finally {
    await service.close();
  }
});

test('a P-256 key signs with ES256, and a PKCS#8 PEM (line breaks as \\n too) is read as its JWK is', async () => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const service = await startTestApp({ ACCESS_TOKEN_AUDIENCES: 'bookings', ACCESS_TOKEN_KEYS: pem.trim().replace(/\n/g, '\\n') });
  try {
    const [key] = (await jwksOf(service)).keys;
    assert.equal(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    assert.equal([key.kty, key.crv, key.alg], ['EC', 'P-256', 'ES256']);
    const account = await registerAndVerify(service, 'keys.p256@example.com');
    const token = await minted(service, account);
    assert.equal(decodeProtectedHeader(token), { alg: 'ES256', typ: 'at+jwt', kid: key.kid });
    assert.ok(await accepted(checkWith(service, remoteKeys(service)), token));
    assert.not.ok(service.logs.text().includes(privateKey.export({ format: 'jwk' }).d!));
  } finally {
    await service.close();
  }
});

test('the configuration: audiences, lifetime and keys checked at start, a key named by its place and never quoted', (context) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-keys-'));
  context.dirs.push(dataDir);
  const base = { DATA_DIR: dataDir, JWT_SECRET: 's'.repeat(32), DATA_KEY: randomBytes(32).toString('hex'), PUBLIC_URL: 'https://gatehouse.example' };
  const production = { ...base, NODE_ENV: 'production', DATABASE_URL: 'postgres://db.example/gatehouse', SMTP_URL: 'smtp://mail.example' };
  const ed25519 = () => generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });

  const defaults = loadConfig(base).accessTokens;
  assert.equal([defaults.audiences, defaults.ttlSeconds, defaults.keys], [[], 300, []]);
  const listed = loadConfig({ ...base, ACCESS_TOKEN_AUDIENCES: ' bookings, https://billing.example.com ,bookings', ACCESS_TOKEN_TTL: '15m' }).accessTokens;
  assert.equal([listed.audiences, listed.ttlSeconds, listed.keys.length], [['bookings', 'https://billing.example.com'], 900, 1]);

  const problems = (env: Record<string, string>) => refusal(env).problems.join('; ');
  assert.match(problems({ ...production, ACCESS_TOKEN_AUDIENCES: 'bookings' }), 'ACCESS_TOKEN_KEYS: required when NODE_ENV=production and ACCESS_TOKEN_AUDIENCES is set');
  assert.is(loadConfig(production).accessTokens.keys.length, 0, 'production without audiences needs no key');
  assert.is(loadConfig({ ...production, ACCESS_TOKEN_AUDIENCES: 'bookings', ACCESS_TOKEN_KEYS: JSON.stringify(ed25519()) }).accessTokens.keys[0].alg, 'EdDSA');
  for (const audiences of ['https://gatehouse.example', 'https://gatehouse.example/', 'bookings,has space', 'bad\u0001one']) {
    assert.match(problems({ ...base, ACCESS_TOKEN_AUDIENCES: audiences }), /^ACCESS_TOKEN_AUDIENCES: /, audiences);
  }
  for (const ttl of ['30s', '16m', '1h', 'soon', '0']) assert.match(problems({ ...base, ACCESS_TOKEN_TTL: ttl }), /^ACCESS_TOKEN_TTL: must be a duration from 1m to 15m/, ttl);

  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const rsaJwk = rsa.export({ format: 'jwk' });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
  const good = ed25519();
  const { d: _d, ...publicHalf } = good;
  const refusedKeys: Array<[string, RegExp]> = [
    [JSON.stringify(rsaJwk), /key 1 .*only Ed25519 \(EdDSA\) and P-256 \(ES256\) keys sign access tokens/],
    [`${JSON.stringify(good)},${rsa.export({ format: 'pem', type: 'pkcs8' })}`, /key 2 is a rsa key: only Ed25519/],
    [JSON.stringify(p384.export({ format: 'jwk' })), /key 1 is a EC key on P-384/],
    [JSON.stringify(publicHalf), /key 1 is a public key or no key at all/],
    [JSON.stringify({ ...good, alg: 'ES256' }), /key 1 says "alg": "ES256", but its type signs with EdDSA/],
    [JSON.stringify({ ...good, d: 'AAAA' }), /key 1 is not a private key Node.js can read/],
    ['-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----', /key 1 is not a PKCS#8 private key/],
    [`${JSON.stringify(good)},,${JSON.stringify(good)}`, /key 2 is neither a private JWK/],
    ['secret', /key 1 is neither a private JWK/],
  ];
  for (const [keys, expected] of refusedKeys) {
    const text = problems({ ...base, ACCESS_TOKEN_AUDIENCES: 'bookings', ACCESS_TOKEN_KEYS: keys });
    assert.match(text, expected);
    assert.match(text, /^ACCESS_TOKEN_KEYS: /);
    for (const secret of [String(good.d), String(rsaJwk.d), 'not base64', 'secret']) assert.not.ok(text.includes(secret), `${expected}: nothing of the value is quoted`);
  }
  assert.not.ok(JSON.stringify(loadConfig({ ...base, ACCESS_TOKEN_KEYS: JSON.stringify(good) })).includes(String(good.d)), 'a serialised configuration shows no key');
});

test('tokens keygen: a private JWK alone on stdout, what it is and how to rotate it in on stderr; --json, --alg, --help', async () => {
  const human = await admin(['tokens', 'keygen']);
  assert.is(human.code, 0, human.stderr);
  assert.is(human.stdout.split('\n').filter(Boolean).length, 1, 'one line on stdout');
  const jwk = JSON.parse(human.stdout);
  assert.equal([jwk.kty, jwk.crv, jwk.alg, typeof jwk.d], ['OKP', 'Ed25519', 'EdDSA', 'string']);
  const kid = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x });
  assert.match(human.stderr, `This is a new EdDSA PRIVATE key (kid ${kid})`);
  assert.match(human.stderr, /list it second in ACCESS_TOKEN_KEYS[\s\S]*move it first[\s\S]*remove the old key/);
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-keys-'));
  try {
    assert.is(loadConfig({ DATA_DIR: dataDir, ACCESS_TOKEN_KEYS: human.stdout.trim() }).accessTokens.keys.length, 1, 'ACCESS_TOKEN_KEYS takes it as printed');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }

  const es = await keygen('ES256');
  assert.equal([es.jwk.kty, es.jwk.crv, es.jwk.alg], ['EC', 'P-256', 'ES256']);
  assert.is(es.kid, await calculateJwkThumbprint({ kty: es.jwk.kty, crv: es.jwk.crv, x: es.jwk.x, y: es.jwk.y }));
  assert.is.not((await keygen()).jwk.d, jwk.d, 'a new key every time');

  const wrong = await admin(['tokens', 'keygen', '--alg', 'RS256']);
  assert.is(wrong.code, 2);
  assert.is(wrong.stdout, '');
  assert.match(wrong.stderr, /--alg <alg>.*RS256.*EdDSA, ES256/);
  for (const args of [['tokens', '--help'], ['tokens', 'keygen', '--help']]) {
    const help = await admin(args);
    assert.is(help.code, 0, help.stderr);
    assert.ok(help.stdout.startsWith(`Usage: admin ${args.slice(0, -1).join(' ')} `), help.stdout.split('\n')[0]);
    assert.match(help.stdout, /Exit codes:/);
  }
  assert.match((await admin(['--help'])).stdout, /tokens/);
});

test.run();
