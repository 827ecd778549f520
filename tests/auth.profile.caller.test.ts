import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, issuePaths, registerAndVerify, type Account } from './helpers/auth.ts';
import { callerOf, refusal } from './helpers/caller.ts';
import { profileEvents, storedProfile } from './helpers/accounts.ts';
import { startTestApp, type TestService } from './helpers/service.ts';

// docs/API.md, Account lifecycle (Profile): the rules of auth.updateProfile, called in process.
// What HTTP adds (credentials, cookies from another site, bodies no client sends, the request's
// facts in the activity) is tested over REST in tests/auth.profile.rest.test.ts.

const test = suite<{ service: TestService }>('auth.updateProfile: what a profile change takes, refuses and records');

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

type Profile = { name?: unknown; company?: unknown } & Record<string, unknown>;

const newAccount = (service: TestService, email: string) => registerAndVerify(service, email, { name: 'Ada Lovelace', company: 'Analytical Engines' });
const as = (service: TestService, account: Account) => callerOf(service, { bearer: account.token });
/** Any input, as a client that ignores the types would send it. */
const updateProfile = (service: TestService, account: Account, input: Profile) => as(service, account).auth.updateProfile(input as never);



/** A change answered with `{ success, user }`, its user the one auth.me now shows. */
async function updated(service: TestService, account: Account, input: Profile) {
  const answer = await updateProfile(service, account, input);
  assert.equal(Object.keys(answer).sort(), ['success', 'user']);
  assert.is(answer.success, true);
  assert.equal(answer.user, (await as(service, account).auth.me()).user, 'the answer is auth.me as it now is');
  return answer.user;
}

test('company: null clears it, as does an empty one; a field left out stays as it is', async ({ service }) => {
  const account = await newAccount(service, 'profile.clear@example.com');
  const cleared = await updated(service, account, { company: null });
  assert.is(cleared.company, null);
  assert.is(cleared.name, 'Ada Lovelace', 'the name was left out, so it stays');
  assert.equal(await storedProfile(service, account).then(({ company }) => company), null);

  await updated(service, account, { company: 'Back again' });
  const emptied = await updated(service, account, { company: '   ' });
  assert.is(emptied.company, null, 'blank once trimmed: no company');
  assert.equal(await profileEvents(service, account), [['company'], ['company'], ['company']]);
});

test('the values the account already has change nothing: no write, no activity', async ({ service }) => {
  const account = await newAccount(service, 'profile.same@example.com');
  const before = await storedProfile(service, account);
  const same = await updated(service, account, { name: ' Ada Lovelace ', company: 'Analytical Engines' });
  assert.equal(same, account.user);
  assert.equal(await storedProfile(service, account), before, 'updated_at did not move either');
  assert.equal(await profileEvents(service, account), []);

  // Only what moves counts: the same name with a new company is a company change.
  await updated(service, account, { name: 'Ada Lovelace', company: 'Engines' });
  assert.equal(await profileEvents(service, account), [['company']]);
  // And clearing a company that is already cleared is nothing again.
  await updated(service, account, { company: null });
  await updated(service, account, { company: '' });
  assert.equal(await profileEvents(service, account), [['company'], ['company']]);
});

test('the limits: 100 characters of name and 200 of company are taken, trimmed first; one more is refused', async ({ service }) => {
  const account = await newAccount(service, 'profile.limits@example.com');
  const name = 'n'.repeat(100);
  const company = 'c'.repeat(200);
  const user = await updated(service, account, { name: ` ${name} `, company: `\u00a0${company} ` });
  assert.equal([user.name, user.company], [name, company]);
  const before = await storedProfile(service, account);
  for (const [field, value] of [['name', `${name}n`], ['company', `${company}c`]]) {
    const refused = await refusal(updateProfile(service, account, { [field]: value }));
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(refused.body.issues, [{ path: field, message: `must be at most ${field === 'name' ? 100 : 200} characters` }]);
  }
  assert.equal(await storedProfile(service, account), before);
});

test('values of the wrong kind are refused by field, and nothing stored changes', async ({ service }) => {
  const account = await newAccount(service, 'profile.wrong@example.com');
  const before = await storedProfile(service, account);
  const wrong: Array<[Profile, string, string]> = [
    [{ name: 5 }, 'name', 'must be text'],
    [{ name: null }, 'name', 'must not be null'],
    [{ name: ['Mallory'] }, 'name', 'must be text'],
    [{ name: { first: 'Mallory' } }, 'name', 'must be text'],
    [{ name: '' }, 'name', 'must not be empty'],
    [{ name: '    ' }, 'name', 'must not be empty'],
    [{ company: 7 }, 'company', 'must be text'],
    [{ company: false }, 'company', 'must be text'],
    [{ name: 'Mallory\u0000' }, 'name', 'must not contain control characters'],
    [{ company: 'Evil\u0000Corp' }, 'company', 'must not contain control characters'],
    [{ name: 'Line\nbreak' }, 'name', 'must not contain control characters'],
    [{ company: 'Bell\u0007' }, 'company', 'must not contain control characters'],
    [{ name: 'Half \ud800 pair' }, 'name', 'must be Unicode text (it holds half of a surrogate pair)'],
  ];
  for (const [input, path, message] of wrong) {
    const refused = await refusal(updateProfile(service, account, input));
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.equal(refused.body.issues, [{ path, message }], JSON.stringify(input));
  }
  assert.equal(await storedProfile(service, account), before);
  assert.equal(await profileEvents(service, account), []);
});

test('a field the procedure does not know is VALIDATION_FAILED naming it, and nothing changes', async ({ service }) => {
  const account = await newAccount(service, 'profile.stray@example.com');
  const before = await storedProfile(service, account);
  const misspelt = await refusal(updateProfile(service, account, { name: 'Ada King', compnay: 'Typo Ltd' }));
  assertError(misspelt, 400, 'VALIDATION_FAILED');
  assert.equal(misspelt.body.issues, [{ path: 'compnay', message: 'is not a field of this request' }]);
  assert.match(misspelt.body.message, 'compnay is not a field of this request');
  for (const stray of [{ email: 'other@example.com' }, { role: 'admin' }, { plan: 'pro', name: 'Ada' }]) {
    const refused = await refusal(updateProfile(service, account, stray));
    assertError(refused, 400, 'VALIDATION_FAILED');
    assert.ok(issuePaths(refused).includes(Object.keys(stray)[0]), refused.text);
  }
  assert.equal(await storedProfile(service, account), before, 'not even the name that came with the stray field');
  const shown = (await as(service, account).auth.me()).user;
  assert.equal([shown.email, shown.role, shown.plan], [account.email, 'user', 'free']);
  assert.equal(await profileEvents(service, account), []);
});

test('an empty input {} is VALIDATION_FAILED: nothing to change', async ({ service }) => {
  const account = await newAccount(service, 'profile.empty@example.com');
  const refused = await refusal(updateProfile(service, account, {}));
  assertError(refused, 400, 'VALIDATION_FAILED');
  assert.equal(refused.body.issues, [{ path: '(body)', message: 'has nothing to change: send name, company or both' }]);
  assert.is(refused.body.message, 'The request has nothing to change: send name, company or both.');
  assert.equal(await profileEvents(service, account), []);
});

test('one account changes only itself', async ({ service }) => {
  const alice = await newAccount(service, 'profile.alice@example.com');
  const bob = await newAccount(service, 'profile.bob@example.com');
  const before = await storedProfile(service, bob);
  await updated(service, alice, { name: 'Alice', company: null });
  assert.equal(await storedProfile(service, bob), before);
  assert.is((await callerOf(service, { bearer: bob.apiKey }).auth.me()).user.name, 'Ada Lovelace');
});

test.run();
