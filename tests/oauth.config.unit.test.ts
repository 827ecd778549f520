import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../server/src/config.ts';
import { describeStartFailure } from '../server/src/roles/start-failure.ts';
import { refusal } from './helpers/config.ts';

// docs/CONFIGURATION.md, Identity providers: OAUTH_PROVIDERS and the variables named after each provider.

const test = suite<{ dir: string }>('config: identity providers (OAUTH_*)');

test.before((context) => {
  context.dir = mkdtempSync(join(tmpdir(), 'gatehouse-oauth-config-'));
});
test.after(({ dir }) => rmSync(dir, { recursive: true, force: true }));

const base = (dir: string) => ({ DATA_DIR: dir, JWT_SECRET: 's'.repeat(32), DATA_KEY: randomBytes(32).toString('hex') });
const PRODUCTION = {
  NODE_ENV: 'production',
  PUBLIC_URL: 'https://gatehouse.example',
  DATABASE_URL: 'postgres://gatehouse@db.internal/gatehouse',
  SMTP_URL: 'smtp://mail.internal:25',
};

const namesOf = (error: ConfigError) => error.problems.map((problem) => problem.split(':')[0]).sort();

test('no OAUTH_PROVIDERS: no providers', ({ dir }) => {
  assert.equal(loadConfig(base(dir)).oauthProviders, []);
  assert.equal(loadConfig({ ...base(dir), OAUTH_PROVIDERS: '' }).oauthProviders, []);
});

test('each listed provider with its defaults: google\'s issuer, github\'s URLs, labels, e-mail trust', ({ dir }) => {
  const config = loadConfig({
    ...base(dir),
    OAUTH_PROVIDERS: 'google, github,acme-corp',
    OAUTH_GOOGLE_CLIENT_ID: 'g-id',
    OAUTH_GOOGLE_CLIENT_SECRET: 'g-secret',
    OAUTH_GITHUB_CLIENT_ID: 'gh-id',
    OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
    OAUTH_ACME_CORP_CLIENT_ID: 'a-id',
    OAUTH_ACME_CORP_CLIENT_SECRET: 'a-secret',
    OAUTH_ACME_CORP_ISSUER: 'https://login.acme.example/',
  });
  assert.equal(config.oauthProviders, [
    { name: 'google', label: 'Google', clientId: 'g-id', clientSecret: 'g-secret', trustEmail: true, kind: 'oidc', issuer: 'https://accounts.google.com' },
    { name: 'github', label: 'Github', clientId: 'gh-id', clientSecret: 'gh-secret', trustEmail: true, kind: 'github', authUrl: 'https://github.com', apiUrl: 'https://api.github.com' },
    // The issuer as given: discovery compares it with what the provider says, slash included.
    { name: 'acme-corp', label: 'Acme-corp', clientId: 'a-id', clientSecret: 'a-secret', trustEmail: false, kind: 'oidc', issuer: 'https://login.acme.example/' },
  ]);
});

test('labels, trust and GitHub\'s URLs can be set', ({ dir }) => {
  const config = loadConfig({
    ...base(dir),
    OAUTH_PROVIDERS: 'github,acme',
    OAUTH_GITHUB_CLIENT_ID: 'gh-id',
    OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
    OAUTH_GITHUB_LABEL: 'GitHub',
    OAUTH_GITHUB_TRUST_EMAIL: 'false',
    OAUTH_GITHUB_AUTH_URL: 'http://127.0.0.1:9000/',
    OAUTH_GITHUB_API_URL: 'http://127.0.0.1:9001',
    OAUTH_ACME_CLIENT_ID: 'a-id',
    OAUTH_ACME_CLIENT_SECRET: 'a-secret',
    OAUTH_ACME_ISSUER: 'http://127.0.0.1:9002',
    OAUTH_ACME_LABEL: 'Acme SSO',
    OAUTH_ACME_TRUST_EMAIL: 'true',
  });
  const [github, acme] = config.oauthProviders;
  assert.equal([github.label, github.trustEmail], ['GitHub', false]);
  assert.equal(github.kind === 'github' && [github.authUrl, github.apiUrl], ['http://127.0.0.1:9000', 'http://127.0.0.1:9001']);
  assert.equal([acme.label, acme.trustEmail, acme.kind === 'oidc' && acme.issuer], ['Acme SSO', true, 'http://127.0.0.1:9002']);
});

test('missing and bad values are refused, each variable named', ({ dir }) => {
  assert.equal(namesOf(refusal({ ...base(dir), OAUTH_PROVIDERS: 'acme' })), ['OAUTH_ACME_CLIENT_ID', 'OAUTH_ACME_CLIENT_SECRET', 'OAUTH_ACME_ISSUER']);
  const acme = { OAUTH_PROVIDERS: 'acme', OAUTH_ACME_CLIENT_ID: 'id', OAUTH_ACME_CLIENT_SECRET: 'secret' };
  assert.equal(namesOf(refusal({ ...base(dir), ...acme, OAUTH_ACME_ISSUER: 'login.acme.example' })), ['OAUTH_ACME_ISSUER']);
  assert.equal(namesOf(refusal({ ...base(dir), ...acme, OAUTH_ACME_ISSUER: 'ftp://acme.example' })), ['OAUTH_ACME_ISSUER']);
  assert.equal(namesOf(refusal({ ...base(dir), ...acme, OAUTH_ACME_ISSUER: 'https://a.example', OAUTH_ACME_TRUST_EMAIL: 'yes' })), ['OAUTH_ACME_TRUST_EMAIL']);
  assert.equal(namesOf(refusal({ ...base(dir), ...acme, OAUTH_ACME_ISSUER: 'https://a.example', OAUTH_ACME_LABEL: 'x'.repeat(65) })), ['OAUTH_ACME_LABEL']);
  for (const list of ['Acme', 'acme,acme', 'a b', 'x'.repeat(33), 'acme_corp']) {
    assert.equal(namesOf(refusal({ ...base(dir), OAUTH_PROVIDERS: list })), ['OAUTH_PROVIDERS'], list);
  }
  assert.equal(namesOf(refusal({ ...base(dir), OAUTH_GITHUB_API_URL: 'api.github.com' })), ['OAUTH_GITHUB_API_URL']);
  // A secret never appears in the refusal.
  const refused = refusal({ ...base(dir), ...acme, OAUTH_ACME_CLIENT_SECRET: 'very-secret-value', OAUTH_ACME_ISSUER: 'nope' });
  assert.not.match(refused.message, 'very-secret-value');
});

test('production refuses an http: issuer with one line naming the variable; https is fine', ({ dir }) => {
  const acme = { OAUTH_PROVIDERS: 'acme', OAUTH_ACME_CLIENT_ID: 'id', OAUTH_ACME_CLIENT_SECRET: 'secret' };
  const error = refusal({ ...base(dir), ...PRODUCTION, ...acme, OAUTH_ACME_ISSUER: 'http://login.acme.example' });
  assert.equal(namesOf(error), ['OAUTH_ACME_ISSUER']);
  const line = describeStartFailure(error);
  assert.not.match(line, '\n');
  assert.match(line, 'OAUTH_ACME_ISSUER: must be an https: URL when NODE_ENV=production');
  assert.is(loadConfig({ ...base(dir), ...PRODUCTION, ...acme, OAUTH_ACME_ISSUER: 'https://login.acme.example' }).oauthProviders.length, 1);
  const github = { OAUTH_PROVIDERS: 'github', OAUTH_GITHUB_CLIENT_ID: 'id', OAUTH_GITHUB_CLIENT_SECRET: 'secret' };
  assert.equal(namesOf(refusal({ ...base(dir), ...PRODUCTION, ...github, OAUTH_GITHUB_AUTH_URL: 'http://github.internal' })), ['OAUTH_GITHUB_AUTH_URL']);
});

test.run();
