import { createCipheriv, randomBytes } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSecretBox, deriveKey } from '../server/src/lib/crypto.ts';
import { createDatabase } from '../server/src/lib/db.ts';
import { startEmbeddedPostgres } from '../server/src/lib/embedded-postgres.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate as runMigrations } from '../server/src/lib/migrator.ts';
import { rateLimitSubject } from '../server/src/lib/rate-limiter.ts';
import { parseBareEmail } from '../server/src/lib/text.ts';
import { MIGRATIONS } from '../server/src/migrations/index.ts';
import { issueDeviceToken, readDeviceToken } from '../server/src/modules/sessions/sessions.issue.ts';
import { assertError, bearer, me, registerAndVerify } from './helpers/auth.ts';
import { EMBEDDED_TEMPLATE, createTestDatabase, ensureEmbeddedTemplate } from './helpers/database.ts';
import { startTestApp } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { callerFor } from './helpers/webhook-fixtures.ts';
import { authCacheOf } from '../server/src/modules/sessions/sessions.cache.ts';

// Security review findings 10 and 11 (stored data), and the pure pieces the attacks rely on.

const test = suite('security: what is stored stays private and bound to its place');
const logger = createLogger('silent');

test('a sealed value opens only at its own column and row, under a configured key', () => {
  const key = randomBytes(32);
  const box = createSecretBox([key]);
  const place = { column: 'accounts.api_key_sealed', row: 7 };
  const sealed = box.seal('the secret', place);
  // Key id, 12-byte IV, 16-byte tag, and a ciphertext as long as the 10-byte plaintext.
  assert.match(sealed, /^v2\.[\w-]{8}\.[\w-]{16}\.[\w-]{22}\.[\w-]{14}$/);
  assert.is(box.open(sealed, place), 'the secret');
  assert.throws(() => box.open(sealed, { column: 'accounts.api_key_sealed', row: 8 }));
  assert.throws(() => box.open(sealed, { column: 'sites.secret_sealed', row: 7 }));
  assert.throws(() => createSecretBox([randomBytes(32)]).open(sealed, place));
  assert.is(createSecretBox([randomBytes(32), key]).open(sealed, place), 'the secret', 'any configured key opens what it sealed');
  const [format, id, iv, tag, body] = sealed.split('.');
  const flipped = Buffer.from(body, 'base64url');
  flipped[0] ^= 1;
  assert.throws(() => box.open([format, id, iv, tag, flipped.toString('base64url')].join('.'), place));
  assert.throws(() => box.open(`v1.${iv}.${tag}.${body}`, place), /unknown sealed format/);
  // Nothing but the five parts seal writes: no trailing part, no tag cut short (GCM would
  // check a 4-byte tag as gladly as a 16-byte one).
  assert.throws(() => box.open(`${sealed}.more`, place), /unknown sealed format/);
  const cut = Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url');
  assert.throws(() => box.open([format, id, iv, cut, body].join('.'), place), /authentication tag/i);
});

test('a ciphertext copied into another column or row of the database does not open at /me', async () => {
  const service = await startTestApp();
  try {
    const alice = await registerAndVerify(service, 'alice.sealed@example.com');
    const bob = await registerAndVerify(service, 'bob.sealed@example.com');
    const created = await callerFor(service, { id: alice.user.id, email: alice.email, token: alice.token }).sites.create({
      name: 'Shop',
      paymentWebhookSecret: 'whsec_site_secret_value',
    });
    const [site] = await service.deps.db.query<{ secret_sealed: string }>('SELECT secret_sealed FROM sites WHERE site_key = $1', [created.siteKey]);
    const [original] = await service.deps.db.query<{ api_key_sealed: string }>('SELECT api_key_sealed FROM accounts WHERE id = $1', [alice.user.id]);
    const [bobs] = await service.deps.db.query<{ api_key_sealed: string }>('SELECT api_key_sealed FROM accounts WHERE id = $1', [bob.user.id]);
    // sites.create put Alice's session in the /me cache; the notice of each UPDATE evicts it,
    // but it arrives on the LISTEN connection a moment after the commit, so wait for it.
    const storeAlicesKey = async (sealed: string) => {
      const epochBefore = authCacheOf(service.deps).epoch;
      await service.deps.db.query('UPDATE accounts SET api_key_sealed = $2 WHERE id = $1', [alice.user.id, sealed]);
      if (authCacheOf(service.deps).enabled) await eventually('the change noticed', () => authCacheOf(service.deps).epoch !== epochBefore);
    };
    for (const copied of [site.secret_sealed, bobs.api_key_sealed]) {
      await storeAlicesKey(copied);
      const answer = await me(service, bearer(alice.token));
      assertError(answer, 500, 'INTERNAL_ERROR');
      assert.not.match(answer.text, 'whsec_site_secret_value');
      assert.not.match(answer.text, bob.apiKey);
    }
    await storeAlicesKey(original.api_key_sealed);
    assert.is((await me(service, bearer(alice.token))).body.user.api_key, alice.apiKey);
  } finally {
    await service.close();
  }
});

/** The format before v2: no key id, no associated data. */
function sealV1(dataKey: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(dataKey, 'secret-box'), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', ...[iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'))].join('.');
}

test('migration 0004 re-seals every stored secret of the old format, bound to its place', async () => {
  const database = await createTestDatabase();
  const db = await createDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, logger });
  try {
    const dataKey = randomBytes(32);
    const secretBox = createSecretBox([dataKey]);
    const context = { secretBox, dataKeys: [dataKey] };
    await runMigrations(db, logger, MIGRATIONS.slice(0, 3), (tx) => ({ sql: (text: string, values?: unknown[]) => tx.query(text, values), ...context }));
    const channelId = '0b0e6f4e-8d7c-4a43-9a5e-0d3f2f1f0c11';
    await db.query(
      `INSERT INTO accounts (id, email, password_hash, name, api_key_hash, api_key_sealed) VALUES (5, 'old@example.com', 'x', 'Old', '\\x00', $1)`,
      [sealV1(dataKey, 'old api key')],
    );
    await db.query(`INSERT INTO sites (site_key, account_id, name, secret_sealed, created_at) VALUES ('site_old', 5, 'Old', $1, now())`, [sealV1(dataKey, 'old site secret')]);
    await db.query(
      `INSERT INTO channels (id, account_id, platform, name, bot_token_sealed, secret_sealed, created_at) VALUES ($1, 5, 'messengerone', 'Old', $2, $3, now())`,
      [channelId, sealV1(dataKey, 'old bot token'), sealV1(dataKey, 'old secret token')],
    );
    const upTo0004 = MIGRATIONS.slice(0, 4);
    assert.equal(upTo0004.at(-1)?.name, '0004-bound-secrets');
    assert.equal(await runMigrations(db, logger, upTo0004, (tx) => ({ sql: (text: string, values?: unknown[]) => tx.query(text, values), ...context })), ['0004-bound-secrets']);
    const [account] = await db.query<{ api_key_sealed: string }>('SELECT api_key_sealed FROM accounts WHERE id = 5');
    const [site] = await db.query<{ secret_sealed: string }>(`SELECT secret_sealed FROM sites WHERE site_key = 'site_old'`);
    const [channel] = await db.query<{ bot_token_sealed: string; secret_sealed: string }>('SELECT bot_token_sealed, secret_sealed FROM channels WHERE id = $1', [channelId]);
    assert.is(secretBox.open(account.api_key_sealed, { column: 'accounts.api_key_sealed', row: 5 }), 'old api key');
    assert.is(secretBox.open(site.secret_sealed, { column: 'sites.secret_sealed', row: 'site_old' }), 'old site secret');
    assert.is(secretBox.open(channel.bot_token_sealed, { column: 'channels.bot_token_sealed', row: channelId }), 'old bot token');
    assert.is(secretBox.open(channel.secret_sealed, { column: 'channels.secret_sealed', row: channelId }), 'old secret token');
  } finally {
    await db.close();
    await database.drop();
  }
});

/** Every path under `dir` whose mode lets group or others in. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    const stat = statSync(path);
    if (stat.mode & 0o077) found.push(`${(stat.mode & 0o777).toString(8)} ${path}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return found;
}

test('the embedded DATA_DIR is 0700 and nothing in it is open to group or others: at start, after writes, at stop', async () => {
  await ensureEmbeddedTemplate();
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-private-'));
  try {
    chmodSync(dataDir, 0o755);
    cpSync(EMBEDDED_TEMPLATE, join(dataDir, 'pgdata'), { recursive: true });
    writeFileSync(join(dataDir, 'left-behind.txt'), 'x', { mode: 0o666 });
    chmodSync(join(dataDir, 'left-behind.txt'), 0o666);
    const embedded = await startEmbeddedPostgres(dataDir, logger);
    assert.is(statSync(dataDir).mode & 0o777, 0o700);
    assert.equal(openToOthers(dataDir), []);
    await embedded.stop();
    assert.equal(openToOthers(dataDir), []);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('e-mail addresses: bare local@domain only, NFC and lower-cased', () => {
  assert.is(parseBareEmail('  Ada@Example.COM '), 'ada@example.com');
  assert.is(parseBareEmail('o\u0301scar@example.com'), '\u00f3scar@example.com');
  assert.is(parseBareEmail('first.last+tag@sub.example.co.uk'), 'first.last+tag@sub.example.co.uk');
  for (const bad of ['ceo\uff20corp.example<attacker@evil.example>', 'Ada <ada@example.com>', '"ada"@example.com', 'a@b.example,c@d.example', 'a b@example.com', 'ada@localhost', 'ada@example..com', '.ada@example.com', 'ada.@example.com', 'ada@-example.com', 'ada@[127.0.0.1]', 'a\u200b@example.com', 'a\u0000@example.com', `${'a'.repeat(65)}@example.com`, 'ada\u2028x@example.com']) {
    assert.is(parseBareEmail(bad), undefined, JSON.stringify(bad));
  }
});

test('rate limits count an IPv6 client by its /64 and an IPv4 one by its address', () => {
  assert.is(rateLimitSubject('203.0.113.7'), '203.0.113.7');
  assert.is(rateLimitSubject('::ffff:203.0.113.7'), '203.0.113.7');
  assert.is(rateLimitSubject('2001:db8:aa:1::1'), '2001:db8:aa:1::/64');
  assert.is(rateLimitSubject('2001:0DB8:00aa:0001:ffff:ffff:ffff:ffff'), '2001:db8:aa:1::/64');
  assert.is(rateLimitSubject('2001:db8::1'), '2001:db8:0:0::/64');
  assert.is(rateLimitSubject('::1'), '0:0:0:0::/64');
  assert.is(rateLimitSubject('fe80::1%eth0'), 'fe80:0:0:0::/64');
});

test('a device token opens only as signed, for the account it names, under any listed key', () => {
  const keys = [randomBytes(32)];
  const token = issueDeviceToken(keys, 42);
  const device = readDeviceToken(keys, token);
  assert.is(device?.accountId, 42);
  assert.is.not(readDeviceToken(keys, issueDeviceToken(keys, 42))?.id, device?.id, 'each login on a new device is a new device');
  assert.is(readDeviceToken([randomBytes(32)], token), undefined);
  assert.is(readDeviceToken(keys, token.replace('d1.42.', 'd1.43.')), undefined);
  assert.is(readDeviceToken(keys, `${token}x`), undefined);
  assert.is(readDeviceToken(keys, undefined), undefined);
  // DATA_KEY rotation: a device signed under the old key is still known once a new one leads.
  const rotated = [randomBytes(32), keys[0]];
  assert.is(readDeviceToken(rotated, token)?.id, device?.id);
  assert.ok(readDeviceToken(rotated, issueDeviceToken(rotated, 42)));
  assert.is(readDeviceToken(keys, issueDeviceToken(rotated, 42)), undefined, 'new devices are signed with the first key');
});

test.run();
