import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../server/src/config.ts';
import { refusal } from './helpers/config.ts';

const test = suite<{ dirs: string[] }>('config: loadConfig validates the environment once');

test.before((context) => {
  context.dirs = [];
});
test.after(({ dirs }) => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SECRET = 's'.repeat(32);
const KEY_HEX = randomBytes(32).toString('hex');

function tempDir(context: { dirs: string[] }): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
  context.dirs.push(dir);
  return dir;
}

test('defaults', (context) => {
  const config = loadConfig({ DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX });
  assert.is(config.env, 'development');
  assert.is(config.port, 3000);
  assert.is(config.host, '127.0.0.1', "outside production a developer's secrets stay off the network");
  assert.is(config.publicUrl, 'http://localhost:3000');
  assert.is(config.databaseUrl, undefined);
  assert.is(config.smtpUrl, undefined);
  assert.is(config.mailFrom, 'Gatehouse <no-reply@localhost>');
  assert.is(config.jwtTtlSeconds, 30 * 24 * 3600);
  assert.is(config.telegramApiUrl, 'https://api.telegram.org');
  assert.is(config.rateLimits, true);
  assert.is(config.trustedProxies, 0);
  assert.is(config.authCache, true);
  assert.equal(config.billingWebhookSecrets, []);
  assert.is(config.billingPlans.size, 0);
  assert.equal(config.warnings, []);
  assert.equal(config.corsOrigins, []);
  assert.is(config.requestTimeoutMs, 30_000);
  assert.is(config.headersTimeoutMs, 10_000);
  assert.is(config.maxConnections, 2048);
  assert.is(config.breachedPasswordCheck, 'off');
  assert.is(config.hibpApiUrl, 'https://api.pwnedpasswords.com');
  assert.is(loadConfig({ DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX, PORT: '' }).port, 3000);
});

test('values are parsed: ports, URLs, durations, keys, plans, secrets', (context) => {
  const base = { DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX };
  const config = loadConfig({
    ...base,
    PORT: '8080',
    PUBLIC_URL: 'https://gatehouse.example/',
    JWT_TTL: '12h',
    BILLING_PLANS: 'pri_basic=pro, pri_team=team',
    BILLING_WEBHOOK_SECRET: 'new-secret, old-secret',
    RATE_LIMITS: 'off',
  });
  assert.is(config.port, 8080);
  assert.is(config.publicUrl, 'https://gatehouse.example');
  assert.is(config.jwtTtlSeconds, 43200);
  assert.equal([...config.billingPlans], [['pri_basic', 'pro'], ['pri_team', 'team']]);
  assert.equal(config.billingWebhookSecrets, ['new-secret', 'old-secret']);
  assert.is(config.rateLimits, false);
  assert.is(loadConfig({ ...base, TRUST_PROXY: '2' }).trustedProxies, 2);
  assert.is(loadConfig({ ...base, AUTH_CACHE: 'off' }).authCache, false);
  assert.is(loadConfig(base).fastPaths, true);
  assert.is(loadConfig({ ...base, FAST_PATHS: 'off' }).fastPaths, false);
  assert.is(loadConfig({ ...base, TRUST_PROXY: 'off' }).trustedProxies, 0);
  assert.ok(config.warnings.some((warning) => warning.includes('RATE_LIMITS')));
  assert.is(loadConfig({ ...base, PORT: '8080' }).publicUrl, 'http://localhost:8080');
  for (const [ttl, seconds] of [['90s', 90], ['15m', 900], ['30d', 2592000], ['3600', 3600], ['400d', 400 * 86400]] as const) {
    assert.is(loadConfig({ ...base, JWT_TTL: ttl }).jwtTtlSeconds, seconds);
  }
  assert.is(loadConfig(base).sessionIdleTimeoutSeconds, 14 * 86400, 'SESSION_IDLE_TIMEOUT defaults to 14d');
  for (const [idle, seconds] of [['12h', 43200], ['30m', 1800], ['600', 600], ['0', 0], ['0d', 0]] as const) {
    assert.is(loadConfig({ ...base, SESSION_IDLE_TIMEOUT: idle }).sessionIdleTimeoutSeconds, seconds, idle);
  }
  const raw = Buffer.from(KEY_HEX, 'hex');
  assert.equal(loadConfig(base).dataKeys, [raw]);
  assert.equal(loadConfig({ ...base, DATA_KEY: raw.toString('base64') }).dataKeys, [raw]);
  assert.equal(loadConfig(base).jwtSecrets, [Buffer.from(SECRET)]);
  // Rotation: several comma-separated values, the first in use; one key written twice is one.
  const next = randomBytes(32);
  assert.equal(loadConfig({ ...base, DATA_KEY: `${next.toString('base64')}, ${KEY_HEX}, ${raw.toString('base64')}` }).dataKeys, [next, raw]);
  assert.equal(loadConfig({ ...base, JWT_SECRET: `${'n'.repeat(40)},${SECRET}` }).jwtSecrets, [Buffer.from('n'.repeat(40)), Buffer.from(SECRET)]);
  const defaults = loadConfig(base);
  assert.is(defaults.shutdownTimeoutMs, 25_000);
  assert.is(defaults.databasePoolSize, 20);
  assert.is(defaults.healthPort, undefined);
  const tuned = loadConfig({ ...base, SHUTDOWN_TIMEOUT: '10s', DATABASE_POOL_SIZE: '50', HEALTH_PORT: '3001' });
  assert.equal([tuned.shutdownTimeoutMs, tuned.databasePoolSize, tuned.healthPort], [10_000, 50, 3001]);
  assert.is(loadConfig({ ...base, SHUTDOWN_TIMEOUT: '24d' }).shutdownTimeoutMs, 24 * 86_400_000, 'the longest a timer waits');
  assert.match(refusal({ ...base, JWT_TTL: '401d' }).message, 'JWT_TTL: must be a duration like 30d, 12h, 15m or seconds, at most 400d');
  assert.equal(loadConfig({ ...base, CORS_ORIGINS: 'https://App.example/, http://localhost:5173' }).corsOrigins, ['https://app.example', 'http://localhost:5173']);
  const timeouts = loadConfig({ ...base, REQUEST_TIMEOUT: '5s', HEADERS_TIMEOUT: '1m', MAX_CONNECTIONS: '100' });
  assert.is(timeouts.requestTimeoutMs, 5000);
  assert.is(timeouts.headersTimeoutMs, 5000, 'headers cannot take longer than the whole request');
  assert.is(timeouts.maxConnections, 100);
  const breachCheck = loadConfig({ ...base, BREACHED_PASSWORD_CHECK: 'hibp', HIBP_API_URL: 'http://127.0.0.1:8089/' });
  assert.equal([breachCheck.breachedPasswordCheck, breachCheck.hibpApiUrl], ['hibp', 'http://127.0.0.1:8089']);
});

const BAD_VALUES: Array<[string, string]> = [
  ['PORT', 'abc'],
  ['PORT', '70000'],
  ['PORT', '-1'],
  ['PORT', '80.5'],
  ['JWT_SECRET', 's'.repeat(31)],
  ['JWT_SECRET', `${SECRET},short`],
  ['JWT_SECRET', ','],
  ['DATA_KEY', 'not-a-key'],
  ['DATA_KEY', KEY_HEX.slice(1)],
  ['DATA_KEY', randomBytes(16).toString('base64')],
  ['DATA_KEY', `${KEY_HEX},not-a-key`],
  ['SHUTDOWN_TIMEOUT', 'never'],
  ['DATABASE_POOL_SIZE', '1'],
  ['DATABASE_POOL_SIZE', 'lots'],
  ['HEALTH_PORT', '99999'],
  ['WORKER_METRICS_PORT', '0'],
  ['WORKER_METRICS_PORT', '65536'],
  ['WORKER_METRICS_PORT', 'metrics'],
  ['WORKER_METRICS_PORT', '9464.5'],
  ['WORKER_METRICS_PORT', '-9464'],
  ['BILLING_PLANS', 'pri_1=pro,pri_2'],
  ['BILLING_PLANS', 'pri_1=pro=team'],
  ['BILLING_PLANS', '=pro'],
  ['JWT_TTL', 'forever'],
  ['JWT_TTL', '0'],
  ['JWT_TTL', '401d'],
  ['JWT_TTL', '99999999999d'],
  ['SESSION_IDLE_TIMEOUT', '401d'],
  ['SHUTDOWN_TIMEOUT', '25d'],
  ['REQUEST_TIMEOUT', '2073601'],
  ['SESSION_IDLE_TIMEOUT', 'never'],
  ['SESSION_IDLE_TIMEOUT', 'off'],
  ['SESSION_IDLE_TIMEOUT', '-1'],
  ['SESSION_IDLE_TIMEOUT', '14 days'],
  ['SESSION_IDLE_TIMEOUT', '1.5h'],
  ['OPERATOR_BOT_SECRET', 'my.secret'],
  ['OPERATOR_BOT_SECRET', 's'.repeat(257)],
  ['RATE_LIMITS', 'yes'],
  ['AUTH_CACHE', 'no'],
  ['FAST_PATHS', 'fast'],
  ['TRUST_PROXY', 'true'],
  ['TRUST_PROXY', '0'],
  ['TRUST_PROXY', '11'],
  ['PUBLIC_URL', 'gatehouse.example'],
  ['PUBLIC_URL', 'ftp://gatehouse.example'],
  ['DATABASE_URL', 'mysql://localhost/db'],
  ['SMTP_URL', 'http://mail.example'],
  ['NODE_ENV', 'staging'],
  ['CORS_ORIGINS', 'app.example'],
  ['CORS_ORIGINS', 'https://app.example/path'],
  ['REQUEST_TIMEOUT', 'soon'],
  ['HEADERS_TIMEOUT', '0'],
  ['MAX_CONNECTIONS', '0'],
  ['MAX_CONNECTIONS', 'many'],
  ['BREACHED_PASSWORD_CHECK', 'on'],
  ['BREACHED_PASSWORD_CHECK', 'HIBP'],
  ['HIBP_API_URL', 'api.pwnedpasswords.com'],
  ['HIBP_API_URL', 'ftp://api.pwnedpasswords.com'],
  ['ADMIN_EMAILS', 'ops@example.com,not an address'],
  ['ADMIN_EMAILS', 'Ops <ops@example.com>'],
  ['ADMIN_EMAILS', 'ops@example.com;root@example.com'],
];

test('ADMIN_EMAILS is read as addresses are normalised, each once', (context) => {
  const config = loadConfig({ DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX, ADMIN_EMAILS: ' Ops@Example.COM, root@example.com ,,ops@example.com' });
  assert.equal(config.adminEmails, ['ops@example.com', 'root@example.com']);
  assert.equal(loadConfig({ DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX }).adminEmails, []);
});

for (const [name, value] of BAD_VALUES) {
  test(`a bad ${name} (${value.slice(0, 20)}) is refused, naming the variable`, (context) => {
    const error = refusal({ DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX, [name]: value });
    assert.match(error.message, name);
    assert.equal(error.problems.map((problem) => problem.split(':')[0]), [name], error.problems.join('; '));
  });
}

test('HOST: 127.0.0.1 outside production, 0.0.0.0 in it, as given when set', (context) => {
  const base = { DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX };
  const production = { ...base, NODE_ENV: 'production', PUBLIC_URL: 'https://gatehouse.example', DATABASE_URL: 'postgres://gatehouse@db.internal/gatehouse', SMTP_URL: 'smtp://mail.internal:25' };
  assert.is(loadConfig({ ...base, NODE_ENV: 'development' }).host, '127.0.0.1');
  assert.is(loadConfig({ ...base, NODE_ENV: 'test' }).host, '127.0.0.1');
  assert.is(loadConfig({ ...base, HOST: '' }).host, '127.0.0.1', 'empty is unset');
  assert.is(loadConfig(production).host, '0.0.0.0');
  assert.is(loadConfig({ ...base, HOST: '0.0.0.0' }).host, '0.0.0.0');
  assert.is(loadConfig({ ...production, HOST: '10.0.0.5' }).host, '10.0.0.5');
  assert.is(loadConfig({ ...base, HOST: '::' }).host, '::');
});

test('WORKER_METRICS_PORT: unset by default; a port of 1 to 65535; said at start when METRICS_TOKEN is missing', (context) => {
  const base = { DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX };
  assert.is(loadConfig(base).workerMetricsPort, undefined);
  assert.is(loadConfig({ ...base, WORKER_METRICS_PORT: '' }).workerMetricsPort, undefined);
  const withToken = loadConfig({ ...base, WORKER_METRICS_PORT: '9464', METRICS_TOKEN: 'm'.repeat(16) });
  assert.equal([withToken.workerMetricsPort, withToken.warnings], [9464, []]);
  assert.is(loadConfig({ ...base, WORKER_METRICS_PORT: '65535', METRICS_TOKEN: 'm'.repeat(16) }).workerMetricsPort, 65535);
  assert.equal(loadConfig({ ...base, WORKER_METRICS_PORT: '9464' }).warnings, ['WORKER_METRICS_PORT is set without METRICS_TOKEN: a worker-only process answers /metrics there with 404']);
  assert.match(refusal({ ...base, WORKER_METRICS_PORT: '0' }).message, 'WORKER_METRICS_PORT: must be a whole number from 1 to 65535');
});

test('several bad values are all named at once', (context) => {
  const error = refusal({ DATA_DIR: tempDir(context), PORT: 'x', JWT_SECRET: 'short', DATA_KEY: 'bad', BILLING_PLANS: 'x' });
  assert.equal(error.problems.map((problem) => problem.split(':')[0]).sort(), ['BILLING_PLANS', 'DATA_KEY', 'JWT_SECRET', 'PORT']);
});

test('production refuses to start without JWT_SECRET, DATA_KEY, PUBLIC_URL, DATABASE_URL (no embedded database) or SMTP_URL (no mail to the log)', (context) => {
  const dir = tempDir(context);
  const full = {
    NODE_ENV: 'production',
    DATA_DIR: dir,
    JWT_SECRET: SECRET,
    DATA_KEY: KEY_HEX,
    PUBLIC_URL: 'https://gatehouse.example',
    DATABASE_URL: 'postgres://gatehouse@db.internal/gatehouse',
    SMTP_URL: 'smtp://mail.internal:25',
  };
  const required = ['JWT_SECRET', 'DATA_KEY', 'PUBLIC_URL', 'DATABASE_URL', 'SMTP_URL'] as const;
  for (const name of required) {
    const { [name]: _left, ...missing } = full;
    const error = refusal(missing);
    assert.equal(error.problems.map((problem) => problem.split(':')[0]), [name]);
    assert.match(error.message, `${name}: required when NODE_ENV=production`);
  }
  assert.equal(refusal({ NODE_ENV: 'production', DATA_DIR: dir }).problems.map((p) => p.split(':')[0]).sort(), [...required].sort());
  const config = loadConfig(full);
  assert.is(config.env, 'production');
  assert.equal(config.warnings, []);
  assert.not.ok(existsSync(join(dir, 'dev-secrets.json')), 'no development secrets in production');
  // An operator's account needs a second factor in production unless told otherwise.
  assert.equal(config.mfaRequiredRoles, ['admin']);
  assert.equal(loadConfig({ ...full, MFA_REQUIRED_ROLES: 'none' }).mfaRequiredRoles, []);
  assert.equal(loadConfig({ ...full, MFA_REQUIRED_ROLES: 'user,admin' }).mfaRequiredRoles, ['user', 'admin']);
});

test('MFA_REQUIRED_ROLES: none by default outside production; a list of roles, or none; anything else is refused', (context) => {
  const base = { DATA_DIR: tempDir(context), JWT_SECRET: SECRET, DATA_KEY: KEY_HEX };
  assert.equal(loadConfig(base).mfaRequiredRoles, []);
  assert.equal(loadConfig({ ...base, MFA_REQUIRED_ROLES: 'admin' }).mfaRequiredRoles, ['admin']);
  assert.equal(loadConfig({ ...base, MFA_REQUIRED_ROLES: 'none' }).mfaRequiredRoles, []);
  for (const bad of ['root', 'admin,none', 'none,admin', 'Admin']) assert.equal(refusal({ ...base, MFA_REQUIRED_ROLES: bad }).problems.map((p) => p.split(':')[0]), ['MFA_REQUIRED_ROLES'], bad);
});

test('EVENTS_ALLOWED_NETWORKS: loopback outside production, nothing in production, none or a list of ranges when set', (context) => {
  const dir = tempDir(context);
  const base = { DATA_DIR: dir, JWT_SECRET: SECRET, DATA_KEY: KEY_HEX };
  const production = { ...base, NODE_ENV: 'production', PUBLIC_URL: 'https://gatehouse.example', DATABASE_URL: 'postgres://gatehouse@db.internal/gatehouse', SMTP_URL: 'smtp://mail.internal:25' };
  assert.equal(loadConfig(base).eventsAllowedNetworks, ['127.0.0.0/8', '::1/128'], "a developer's local receiver works with no setting");
  assert.equal(loadConfig({ ...base, NODE_ENV: 'test' }).eventsAllowedNetworks, ['127.0.0.0/8', '::1/128']);
  assert.equal(loadConfig(production).eventsAllowedNetworks, []);
  assert.equal(loadConfig({ ...production, EVENTS_ALLOWED_NETWORKS: ' 10.20.0.0/16 , fd00::/8' }).eventsAllowedNetworks, ['10.20.0.0/16', 'fd00::/8'], 'one line for an in-cluster receiver');
  assert.equal(loadConfig({ ...base, EVENTS_ALLOWED_NETWORKS: 'none' }).eventsAllowedNetworks, []);
  assert.equal(loadConfig({ ...production, EVENTS_ALLOWED_NETWORKS: '10.0.0.0/8' }).warnings, []);
  for (const wide of ['0.0.0.0/0', '169.254.0.0/16', '169.254.169.254/32', '::/0', 'fe80::/64']) {
    const { warnings } = loadConfig({ ...base, EVENTS_ALLOWED_NETWORKS: wide });
    assert.ok(warnings.some((warning) => /EVENTS_ALLOWED_NETWORKS holds link-local/.test(warning)), wide);
  }
  for (const bad of ['garbage', '10.0.0.0', '10.0.0.0/33', '10/8', '0x0a.0.0.0/8', '10.0.0.0/8,,nope', 'fd00::/129', 'none,10.0.0.0/8', '10.0.0.0/8;rm', `10.0.0.0/8\u0000`]) {
    const error = refusal({ ...base, EVENTS_ALLOWED_NETWORKS: bad });
    assert.equal(error.problems.map((problem) => problem.split(':')[0]), ['EVENTS_ALLOWED_NETWORKS'], bad);
    assert.match(error.message, 'must be none or a comma-separated list of ranges');
  }
});

test('outside production, missing secrets are generated into DATA_DIR and reused on the next load', (context) => {
  const dir = tempDir(context);
  const first = loadConfig({ DATA_DIR: dir });
  const file = join(dir, 'dev-secrets.json');
  assert.ok(existsSync(file));
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.is(first.jwtSecrets.length, 1);
  assert.is(first.jwtSecrets[0].length, 64, '48 random bytes, in base64');
  assert.is(first.dataKeys[0].length, 32);
  assert.ok(first.warnings.some((warning) => warning.includes('dev-secrets.json')), first.warnings.join('; '));
  assert.not.match(first.warnings.join(' '), first.jwtSecrets[0].toString());

  const stored = readFileSync(file, 'utf8');
  const second = loadConfig({ DATA_DIR: dir });
  assert.equal(second.jwtSecrets, first.jwtSecrets);
  assert.equal(second.dataKeys, first.dataKeys);
  assert.is(readFileSync(file, 'utf8'), stored);

  const elsewhere = loadConfig({ DATA_DIR: tempDir(context) });
  assert.not.equal(elsewhere.jwtSecrets, first.jwtSecrets);
  const partly = loadConfig({ DATA_DIR: dir, JWT_SECRET: SECRET });
  assert.equal(partly.jwtSecrets, [Buffer.from(SECRET)]);
  assert.equal(partly.dataKeys, first.dataKeys);
  assert.ok(partly.warnings.some((warning) => warning.startsWith('DATA_KEY not set: using development secrets')), partly.warnings.join('; '));
});

test('development secrets already in DATA_DIR: the directory and the file are made private at every load, with or without the embedded database', (context) => {
  const dir = tempDir(context);
  const first = loadConfig({ DATA_DIR: dir });
  const file = join(dir, 'dev-secrets.json');
  chmodSync(dir, 0o777);
  chmodSync(file, 0o666);
  const again = loadConfig({ DATA_DIR: dir, DATABASE_URL: 'postgres://gatehouse@db.internal/gatehouse' });
  assert.equal(again.dataKeys, first.dataKeys, 'the same secrets');
  assert.is(statSync(dir).mode & 0o777, 0o700);
  assert.is(statSync(file).mode & 0o777, 0o600);
});

test('a development secrets file that cannot be read as one stops the load, naming DATA_DIR, and is left as it is', (context) => {
  for (const broken of ['', '{"jwtSecret":"abc"', '{"jwtSecret":"abc","dataKey":"not hex"}', 'null']) {
    const dir = tempDir(context);
    const file = join(dir, 'dev-secrets.json');
    writeFileSync(file, broken, { mode: 0o600 });
    const error = refusal({ DATA_DIR: dir });
    assert.equal(error.problems.map((problem) => problem.split(':')[0]), ['DATA_DIR'], broken);
    assert.match(error.message, `${file} is not the development secrets file Gatehouse writes`);
    assert.match(error.message, /or set JWT_SECRET and DATA_KEY/);
    assert.is(readFileSync(file, 'utf8'), broken, 'not replaced');
  }
});

test.run();
