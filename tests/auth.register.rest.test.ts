import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, PASSWORD, assertError, bearer, issuePaths, login, me, nextMail, register, registerAndVerify, registerForToken } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { linkToken } from './helpers/smtp.ts';

const test = suite<{ service: TestService }>('REST register: POST /api/v1/auth/register');

test.before(async (context) => {
  // Stored hashes' parameters and login timing are about argon2's real cost.
  context.service = await startTestApp({}, { realPasswordCost: true });
});
test.after(async ({ service }) => {
  await service?.close();
});

const REGISTERED = { success: true, requires_verification: true, message: 'Check your inbox: we sent a link to confirm your e-mail address.' };

async function accountRow(service: TestService, email: string) {
  const [row] = await service.deps.db.query<Record<string, any>>('SELECT * FROM accounts WHERE email = $1', [email]);
  return row;
}

test('a new account: 201, a verification mail, stored lower-cased and trimmed, plan free, role user', async ({ service }) => {
  const result = await register(service, { email: '  New.Person@Example.COM ', password: PASSWORD, name: '  New Person  ' });
  assert.is(result.status, 201);
  assert.equal(result.body, REGISTERED);

  const mail = await nextMail(service, 'new.person@example.com', 0);
  assert.match(mail.text, `${service.env.PUBLIC_URL}/verify-email?token=`);
  const row = await accountRow(service, 'new.person@example.com');
  assert.is(row.name, 'New Person');
  assert.is(row.company, null);
  assert.is(row.plan, 'free');
  assert.is(row.role, 'user');
  assert.is(row.email_verified, false);
  assert.is(new Date(row.created_at).toISOString(), service.clock.now().toISOString());
});

test('the user shape after verification matches the contract', async ({ service }) => {
  const account = await registerAndVerify(service, 'shape@example.com', { name: 'Shape', company: '  Shape Ltd ' });
  const { user } = account;
  assert.equal(Object.keys(user).sort(), ['api_key', 'company', 'created_at', 'email', 'email_verified', 'id', 'name', 'plan', 'role']);
  assert.ok(Number.isInteger(user.id) && user.id > 0);
  assert.is(user.email, 'shape@example.com');
  assert.is(user.name, 'Shape');
  assert.is(user.company, 'Shape Ltd');
  assert.is(user.plan, 'free');
  assert.is(user.role, 'user');
  assert.is(user.email_verified, true);
  assert.match(user.api_key, /^[0-9a-f]{64}$/);
  assert.is(new Date(user.created_at).toISOString(), user.created_at);
});

test('passwords are stored as argon2id with the OWASP parameters: 19 MiB, 2 passes, 1 lane', async ({ service }) => {
  await registerForToken(service, 'argon@example.com');
  const row = await accountRow(service, 'argon@example.com');
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(row.password_hash);
  assert.ok(match, `argon2id PHC string: ${row.password_hash}`);
  assert.equal(match.slice(1, 4).map(Number), [19456, 2, 1], row.password_hash);
  assert.not.match(row.password_hash, PASSWORD);
});

test('a taken, verified address: the same answer, a "someone tried" mail, nothing changes', async ({ service }) => {
  const owner = await registerAndVerify(service, 'taken.verified@example.com', { name: 'Owner', company: 'Owner Co' });
  const fresh = await register(service, { email: 'brand.new@example.com', password: 'another password 1', name: 'Intruder' });
  const seen = service.smtp.mailsTo(owner.email).length;
  const taken = await register(service, { email: 'Taken.Verified@example.com', password: 'another password 1', name: 'Intruder', company: 'Evil' });
  assert.is(taken.status, fresh.status);
  assert.equal(taken.body, fresh.body);
  assert.equal([...taken.headers.keys()].filter((name) => name !== 'x-request-id' && name !== 'date'), [...fresh.headers.keys()].filter((name) => name !== 'x-request-id' && name !== 'date'));

  const mail = await nextMail(service, owner.email, seen);
  assert.match(mail.subject, /someone tried to register/i);
  assert.match(mail.text, 'Owner');
  assert.not.match(mail.text, 'verify-email');

  assert.is((await login(service, owner.email, 'another password 1')).status, 401);
  const still = await login(service, owner.email, owner.password);
  assert.is(still.status, 200);
  assert.equal(still.body.user, owner.user);
  assert.equal((await me(service, bearer(owner.apiKey))).body.user, owner.user);
});

test('a taken, unverified address: the same answer, a fresh link that carries this registration; nothing changes until it is used', async ({ service }) => {
  const email = 'taken.unverified@example.com';
  const firstToken = await registerForToken(service, email, { name: 'First Name', company: 'First Co' });
  const before = await accountRow(service, email);
  const seen = service.smtp.mailsTo(email).length;
  const again = await register(service, { email, password: 'a different password', name: 'Second Name', company: 'Second Co' });
  assert.is(again.status, 201);
  assert.equal(again.body, REGISTERED);

  const mail = await nextMail(service, email, seen);
  assert.match(mail.text, 'Hello Second Name');
  assert.match(mail.text, /registered again/);
  const freshToken = linkToken(mail);
  assert.is.not(freshToken, firstToken);
  assert.equal(await accountRow(service, email), before);

  assertError(await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: firstToken } }), 400, 'INVALID_TOKEN');
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: freshToken } })).status, 200);
  assert.is((await login(service, email, PASSWORD)).status, 401);
  const loggedIn = await login(service, email, 'a different password');
  assert.is(loggedIn.status, 200);
  assert.is(loggedIn.body.user.name, 'Second Name');
  assert.is(loggedIn.body.user.company, 'Second Co');
  assert.is(loggedIn.body.user.id, before.id);
});

test('attack: a resend after someone registered the address again sends no link that would confirm their password', async ({ service }) => {
  const victim = 'victim.resend.second@example.com';
  const victimToken = await registerForToken(service, victim, { name: 'Victim' });
  const attackerPassword = 'attacker chose this';
  const before = service.smtp.mailsTo(victim).length;
  assert.is((await register(service, { email: victim, password: attackerPassword, name: 'Mallory' })).status, 201);
  await nextMail(service, victim, before, /registered again/);
  // The victim's link died with the second registration; its page sends them to resend.
  assertError(await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: victimToken } }), 400, 'INVALID_TOKEN');
  const seen = service.smtp.mailsTo(victim).length;
  const resent = await request(service.url, 'POST', `${AUTH}/resend-verification`, { json: { email: victim } });
  assert.is(resent.status, 200);
  const mail = await nextMail(service, victim, seen);
  assert.match(mail.subject, 'register again', mail.subject);
  assert.not.match(mail.text, 'verify-email', 'no link to confirm');
  assert.not.match(mail.text, 'Mallory');
  // Registering again gives the victim a link for their own password.
  const own = await registerForToken(service, victim, { name: 'Victim' });
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: own } })).status, 200);
  assertError(await login(service, victim, attackerPassword), 401, 'INVALID_CREDENTIALS');
  assert.is((await login(service, victim, PASSWORD)).status, 200);
});

test('attack: whoever registers an address first cannot own it once the mailbox owner confirms', async ({ service }) => {
  const victim = 'victim.prehijack@example.com';
  const attackerPassword = 'attacker chose this';
  assert.is((await register(service, { email: victim, password: attackerPassword, name: 'Mallory', company: 'Evil' })).status, 201);
  await nextMail(service, victim, 0);
  // Before anyone confirms, the attacker's password only learns that the address is unverified.
  assertError(await login(service, victim, attackerPassword), 403, 'EMAIL_NOT_VERIFIED');

  const victimToken = await registerForToken(service, victim, { name: 'Victim' });
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: victimToken } })).status, 200);

  assertError(await login(service, victim, attackerPassword), 401, 'INVALID_CREDENTIALS');
  const owner = await login(service, victim, PASSWORD);
  assert.is(owner.status, 200);
  assert.is(owner.body.user.name, 'Victim');
  assert.is(owner.body.user.company, null);
  const tokens = await service.deps.db.query('SELECT 1 FROM email_tokens t JOIN accounts a ON a.id = t.account_id WHERE a.email = $1 AND t.used_at IS NULL', [victim]);
  assert.is(tokens.length, 0, 'no link of the address is left to use');
});

test('attack: a resend asked for by the first registrant sends no link, and leaves the latest registration\'s link working', async ({ service }) => {
  const victim = 'victim.resend@example.com';
  assert.is((await register(service, { email: victim, password: 'attacker chose this', name: 'Mallory' })).status, 201);
  await nextMail(service, victim, 0);
  const own = await registerForToken(service, victim, { name: 'Victim' });
  const seen = service.smtp.mailsTo(victim).length;
  assert.is((await request(service.url, 'POST', `${AUTH}/resend-verification`, { json: { email: victim } })).status, 200);
  const resent = await nextMail(service, victim, seen);
  assert.not.match(resent.text, 'verify-email');
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: own } })).status, 200);
  assert.is((await login(service, victim, 'attacker chose this')).status, 401);
  assert.is((await login(service, victim, PASSWORD)).body.user.name, 'Victim');
});

const valid = { email: 'fields@example.com', password: PASSWORD, name: 'Fields' };
const at254 = `${'a'.repeat(64)}@${'b'.repeat(185)}.com`;

const rejected: Array<[string, Record<string, unknown>, string]> = [
  ['an address without @', { email: 'no-at-sign.example.com' }, 'email'],
  ['an address with a space', { email: 'two words@example.com' }, 'email'],
  ['an address without a dot in the domain', { email: 'user@localhost' }, 'email'],
  ['an address with two @', { email: 'a@b@example.com' }, 'email'],
  ['an address of 255 characters', { email: `a${at254}` }, 'email'],
  ['a password of 7 characters', { password: '1234567' }, 'password'],
  ['a password of 129 characters', { password: 'p'.repeat(129) }, 'password'],
  ['a name of only spaces', { name: '     ' }, 'name'],
  ['an empty name', { name: '' }, 'name'],
  ['a name of 101 characters', { name: 'n'.repeat(101) }, 'name'],
  ['a company of 201 characters', { company: 'c'.repeat(201) }, 'company'],
  ['a missing name', { name: undefined }, 'name'],
  ['a number as password', { password: 12345678 }, 'password'],
];

for (const [label, change, field] of rejected) {
  test(`rejected with 400 VALIDATION_FAILED on ${field}: ${label}`, async ({ service }) => {
    const result = await register(service, { ...valid, ...change });
    assertError(result, 400, 'VALIDATION_FAILED');
    assert.equal(issuePaths(result), [field]);
  });
}

test('nothing is stored for a rejected registration', async ({ service }) => {
  const rows = await service.deps.db.query('SELECT 1 FROM accounts WHERE email = $1', [valid.email]);
  assert.is(rows.length, 0);
});

test('limits are inclusive: 254-char address, 8- and 128-char password, 100-char name, 200-char company', async ({ service }) => {
  const cases = [
    { email: at254 },
    { email: 'eight@example.com', password: 'x7Kq2mPz' },
    { email: 'long.password@example.com', password: 'p'.repeat(128) },
    { email: 'long.name@example.com', name: `  ${'n'.repeat(100)}  ` },
    { email: 'long.company@example.com', company: 'c'.repeat(200) },
    { email: 'no.company@example.com', company: null },
    { email: 'empty.company@example.com', company: '' },
  ];
  for (const change of cases) {
    const result = await register(service, { ...valid, ...change });
    assert.is(result.status, 201, `${JSON.stringify(change).slice(0, 80)}: ${result.text}`);
  }
  assert.is((await accountRow(service, at254)).email, at254);
  assert.is((await accountRow(service, 'long.name@example.com')).name, 'n'.repeat(100));
  assert.is((await accountRow(service, 'no.company@example.com')).company, null);
  assert.is((await accountRow(service, 'empty.company@example.com')).company, null);
});

test.run();
