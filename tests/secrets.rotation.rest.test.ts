import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeProtectedHeader } from 'jose';
import { reencryptSecrets } from '../server/src/admin/admin.service.ts';
import { loadConfig } from '../server/src/config.ts';
import { openDeps } from '../server/src/roles/open-deps.ts';
import { createSecretBox, keyIdOf } from '../server/src/lib/crypto.ts';
import { jwtKeyId } from '../server/src/lib/jwt.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { StartError } from '../server/src/errors/start-error.ts';
import { totpCodeAt } from '../server/src/modules/mfa/mfa.totp.ts';
import { AUTH, PASSWORD, assertError, bearer, login, me, registerAndVerify, type Account } from './helpers/auth.ts';
import { LogCapture, request, startTestApp, type TestService } from './helpers/service.ts';
import { callerFor, post, stripeEvent, stripeHeaders, unixNow, viberHeaders, viberMessage, viberToken } from './helpers/webhook-fixtures.ts';

// docs/DEPLOY.md, Rotating secrets: JWT_SECRET and DATA_KEY take several values, the first in use, every
// one accepted; `secrets reencrypt` moves what is stored to the first. Rotated here on a live
// database, restart by restart, the way an operator would: nobody is logged out, and every
// stored secret (API keys, a site's payment secret, a channel's bot token) keeps working.

const JWT_A = `a-${randomBytes(24).toString('hex')}`;
const JWT_B = `b-${randomBytes(24).toString('hex')}`;
const KEY_1 = randomBytes(32).toString('hex');
const KEY_2 = randomBytes(32).toString('base64');
const SITE_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;
const BOT_TOKEN = `4f1c-${randomBytes(12).toString('hex')}`;

type Context = { service: TestService; alice: Account; carol: Account & { totpSecret: string }; siteKey: string; channelId: string };
const test = suite<Context>('secrets: JWT_SECRET and DATA_KEY rotate without logging anyone out');

test.before(async (context) => {
  context.service = await startTestApp({ JWT_SECRET: JWT_A, DATA_KEY: KEY_1 });
  context.alice = await registerAndVerify(context.service, 'alice@example.com');
  const caller = callerFor(context.service, { id: context.alice.user.id, email: context.alice.email, token: context.alice.token });
  context.siteKey = (await caller.sites.create({ name: 'Shop', paymentWebhookSecret: SITE_SECRET })).siteKey;
  context.channelId = (await caller.channels.create({ platform: 'messengertwo', name: 'Viber', botToken: BOT_TOKEN })).channelId;
  context.carol = await accountWithTotp(context.service, 'carol@example.com');
});

let lastCodeAt = 0;

/** An account whose authenticator secret is sealed under DATA_KEY like the others. */
async function accountWithTotp(service: TestService, email: string): Promise<Account & { totpSecret: string }> {
  const account = await registerAndVerify(service, email);
  const setup = await request(service.url, 'POST', `${AUTH}/mfa/totp/setup`, { json: { password: PASSWORD }, headers: bearer(account.token) });
  assert.is(setup.status, 200, setup.text);
  const enabled = await request(service.url, 'POST', `${AUTH}/mfa/totp/enable`, { json: { code: totpCodeAt(setup.body.secret, service.clock.now()) }, headers: bearer(account.token) });
  assert.is(enabled.status, 200, enabled.text);
  return { ...account, totpSecret: setup.body.secret };
}

test.after(async ({ service }) => {
  await service?.close();
});

/** Each kind of stored secret still opens: by the API key, a signed payment, a signed Viber message. */
async function assertSecretsWork(context: Context, apiKey: string, label: string) {
  const { service } = context;
  const byKey = await me(service, bearer(apiKey));
  assert.is(byKey.status, 200, `${label}: the API key: ${byKey.text}`);
  const payment = JSON.stringify(stripeEvent({ type: 'payment_intent.created', created: unixNow(service), object: { id: `pi_${randomBytes(6).toString('hex')}`, object: 'payment_intent', amount: 100, currency: 'eur', status: 'requires_payment_method' } }));
  const paid = await post(service, `/webhook/payment/${context.siteKey}`, payment, stripeHeaders(payment, SITE_SECRET, unixNow(service)));
  assert.is(paid.status, 200, `${label}: the site's payment secret: ${paid.text}`);
  const message = viberMessage(viberToken(Number(randomBytes(2).readUInt16BE())), { id: 'visitor', name: 'Visitor' }, 'hello');
  const viber = await post(service, `/messengertwo/bot/${context.channelId}`, message, viberHeaders(message, BOT_TOKEN));
  assert.is(viber.status, 200, `${label}: the channel's bot token: ${viber.text}`);
  // Each sign-in takes a later 30-second step than the last (a code is accepted once), on a
  // clock that a restart sets back to the present.
  lastCodeAt = Math.max(service.clock.now().getTime(), lastCodeAt) + 30_000;
  service.clock.set(new Date(lastCodeAt));
  const firstStep = await login(service, context.carol.email);
  assertError(firstStep, 403, 'MFA_REQUIRED');
  const code = totpCodeAt(context.carol.totpSecret, service.clock.now());
  const secondStep = await request(service.url, 'POST', `${AUTH}/login/mfa`, { json: { mfa_token: firstStep.body.mfa_token, code } });
  assert.is(secondStep.status, 200, `${label}: the authenticator secret: ${secondStep.text}`);
}

/** The key id of every stored sealed value, and of the check value. */
async function sealedKeyIds(service: TestService): Promise<Set<string | undefined>> {
  const rows = await service.deps.db.query<{ value: string }>(
    `SELECT api_key_sealed AS value FROM accounts UNION ALL SELECT secret_sealed FROM sites
     UNION ALL SELECT bot_token_sealed FROM channels UNION ALL SELECT secret_sealed FROM channels WHERE secret_sealed IS NOT NULL
     UNION ALL SELECT secret_sealed FROM mfa_totp UNION ALL SELECT sealed FROM data_key_check`,
  );
  return new Set(rows.map((row) => keyIdOf(row.value)));
}

const keyId = (key: string) => createSecretBox([Buffer.from(key, /^[0-9a-f]{64}$/.test(key) ? 'hex' : 'base64')]).currentKeyId;

test('a new key listed first: old sessions, API keys and secrets work, new tokens carry the new kid; reencrypt moves everything', async (context) => {
  const before = context.alice;
  assert.is(decodeProtectedHeader(before.token).kid, jwtKeyId(Buffer.from(JWT_A)));
  await assertSecretsWork(context, before.apiKey, 'before any rotation');

  context.service = await context.service.restart({ JWT_SECRET: `${JWT_B},${JWT_A}`, DATA_KEY: `${KEY_2},${KEY_1}` });
  const { service } = context;
  assert.is((await me(service, bearer(before.token))).status, 200, 'a session from before the rotation is still signed in');
  await assertSecretsWork(context, before.apiKey, 'both keys listed, nothing re-encrypted yet');
  assert.ok(service.logs.text().includes('secrets reencrypt'), 'the start says stored secrets await re-encryption');

  const again = await registerAndVerify(service, 'bob@example.com');
  assert.is(decodeProtectedHeader(again.token).kid, jwtKeyId(Buffer.from(JWT_B)), 'new sessions are signed with the first secret');
  assert.equal(await sealedKeyIds(service), new Set([keyId(KEY_1), keyId(KEY_2)]), 'old values under the old key, new ones under the new');

  const [mark] = await service.deps.db.query<{ id: number }>('SELECT coalesce(max(id), 0)::int AS id FROM audit_events');
  const report = await reencryptSecrets(service.deps, { accountId: null, request: { ip: '', requestId: 'test' } });
  assert.equal(report, { success: true, reencrypted: 5, unreadable: 0 }, "alice's and carol's API keys, the site's secret, the channel's token and carol's authenticator secret");
  assert.equal(await sealedKeyIds(service), new Set([keyId(KEY_2)]));
  assert.equal(await reencryptSecrets(service.deps, { accountId: null, request: { ip: '', requestId: 'test' } }), { success: true, reencrypted: 0, unreadable: 0 }, 'a second run has nothing to do');
  const [audited] = await service.deps.db.query<{ data: unknown }>(
    `SELECT data FROM audit_events WHERE event = 'admin.secrets_reencrypted' AND id > $1 ORDER BY id LIMIT 1`,
    [mark.id],
  );
  assert.equal(audited?.data, { reencrypted: 5, unreadable: 0 });

  context.service = await context.service.restart({ DATA_KEY: KEY_2 });
  assert.is((await me(context.service, bearer(before.token))).status, 200, 'the old DATA_KEY is gone: sessions do not depend on it');
  await assertSecretsWork(context, before.apiKey, 'the old DATA_KEY removed after reencrypt');
  assert.is((await me(context.service, bearer(again.apiKey))).status, 200);
  assert.not.ok(context.service.logs.text().includes('secrets reencrypt'), 'nothing awaits re-encryption');

  context.service = await context.service.restart({ JWT_SECRET: JWT_B });
  assert.is((await me(context.service, bearer(again.token))).status, 200);
  const dropped = await me(context.service, bearer(before.token));
  assert.is(dropped.status, 401, 'once the old secret is removed, the sessions it signed end (keep it for JWT_TTL)');
});

test('a start whose DATA_KEY opens nothing stored stops with a message naming DATA_KEY, and changes nothing', async (context) => {
  const stored = await sealedKeyIds(context.service);
  // Stopped first: the embedded database serves one process at a time.
  await context.service.stop();
  const logs = new LogCapture();
  const config = loadConfig({ ...context.service.env, DATA_KEY: randomBytes(32).toString('hex') });
  let refused: unknown;
  await openDeps(config, { logger: createLogger('info', logs), superviseQueue: false, authCache: false }).then(
    (deps) => deps.close(),
    (error) => (refused = error),
  );
  assert.instance(refused, StartError);
  assert.is((refused as StartError).variable, 'DATA_KEY');
  assert.match((refused as StartError).message, /none of the configured keys opens the secrets stored in this database/);
  context.service = await context.service.restart({});
  assert.equal(await sealedKeyIds(context.service), stored, 'the stored values are untouched');
  assert.is((await me(context.service, bearer(context.alice.apiKey))).status, 200);
});

test('a value no listed key opens is reported and left alone; the check value stays until every value is moved', async ({ service }) => {
  const strangerBox = createSecretBox([randomBytes(32)]);
  const [channel] = await service.deps.db.query<{ id: string }>(`SELECT id FROM channels LIMIT 1`);
  const foreign = strangerBox.seal('token from elsewhere', { column: 'channels.secret_sealed', row: channel.id });
  await service.deps.db.query(`UPDATE channels SET secret_sealed = $2 WHERE id = $1`, [channel.id, foreign]);
  const [checkBefore] = await service.deps.db.query<{ sealed: string }>('SELECT sealed FROM data_key_check');

  const report = await reencryptSecrets(service.deps, { accountId: null, request: { ip: '', requestId: 'test' } });
  assert.equal(report, { success: false, reencrypted: 0, unreadable: 1 });
  const [after] = await service.deps.db.query<{ secret_sealed: string }>(`SELECT secret_sealed FROM channels WHERE id = $1`, [channel.id]);
  assert.is(after.secret_sealed, foreign, 'left exactly as it was');
  const [checkAfter] = await service.deps.db.query<{ sealed: string }>('SELECT sealed FROM data_key_check');
  assert.is(checkAfter.sealed, checkBefore.sealed);
  assert.not.ok(service.logs.text().includes('token from elsewhere'), 'the log names the row, never the value');
  await service.deps.db.query(`UPDATE channels SET secret_sealed = NULL WHERE id = $1`, [channel.id]);
});

test.run();
