import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PASSWORD, assertError, nextMail, registerAndVerify, type Account } from './helpers/auth.ts';
import { answerOf, callerOf, loginCall as login } from './helpers/caller.ts';
import { startTestApp, type TestService } from './helpers/service.ts';
import { checkedForFaults } from './helpers/faults.ts';
import { createSoftAuthenticator, type SoftAuthenticator } from './helpers/webauthn.ts';
import { insertChallenge, liveChallenge, useChallengeWithPasskey } from '../server/src/modules/mfa/mfa.repo.ts';
import { sha256 } from '../server/src/lib/crypto.ts';

// Passkeys (docs/API.md, Second factor), with a software authenticator that signs as a platform
// one does (the browser suite does the same with Chromium's virtual authenticator): adding,
// signing in with a passkey alone, as the second step after a password, as a step-up proof, and
// removing, the procedures called in process. Each route over REST, the sign-in's cookies and
// the procedures over tRPC are tested in tests/mfa.passkeys.rest.test.ts.

type Context = { service: TestService };
const test = checkedForFaults(suite<Context>('passkeys: add, sign in alone or as the second step, step-up, remove, and what a forged or cloned one gets'));

test.before(async (context) => {
  context.service = await startTestApp();
});
test.after(async ({ service }) => {
  await service?.close();
});

/** The account's procedures as the holder of `credential` (none: a visitor); any input, as a client that ignores the types would send it, answered as REST would. */
const auth = (service: TestService, credential?: string) => callerOf(service, credential ? { bearer: credential } : {}).auth;
const passkeyOptions = (service: TestService, credential: string, input: unknown) => answerOf(auth(service, credential).passkeyOptions(input as never));
const addPasskey = (service: TestService, credential: string, input: unknown) => answerOf(auth(service, credential).addPasskey(input as never));
const removePasskey = (service: TestService, credential: string, id: string, input: Record<string, unknown>) => answerOf(auth(service, credential).removePasskey({ id, ...input } as never));
const loginPasskey = (service: TestService, response: unknown) => answerOf(auth(service).loginPasskey({ response } as never));
const loginMfa = (service: TestService, input: unknown) => answerOf(auth(service).loginMfa(input as never));
const mfaStatus = async (service: TestService, token: string) => (await answerOf(auth(service, token).mfaStatus())).body;

type WithPasskey = Account & { authenticator: SoftAuthenticator; recoveryCodes: string[]; passkeyId: string };

async function accountWithPasskey(service: TestService, email: string): Promise<WithPasskey> {
  const account = await registerAndVerify(service, email);
  const authenticator = createSoftAuthenticator(service.url);
  const options = await passkeyOptions(service, account.token, { password: PASSWORD });
  assert.is(options.status, 200, options.text);
  const added = await addPasskey(service, account.token, { name: 'Laptop', response: authenticator.register(options.body.options) });
  assert.is(added.status, 200, added.text);
  return { ...account, authenticator, recoveryCodes: added.body.recovery_codes, passkeyId: added.body.passkey.id };
}

async function signInOptions(service: TestService, input?: unknown) {
  const options = await answerOf(auth(service).passkeyLoginOptions(input as never));
  assert.is(options.status, 200, options.text);
  return options.body.options;
}

test('adding: options need the password and ask for a discoverable, user-verified passkey; the first one brings recovery codes', async ({ service }) => {
  const account = await registerAndVerify(service, 'passkey.add@example.com');
  assertError(await passkeyOptions(service, account.token, { password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
  const options = await passkeyOptions(service, account.token, { password: PASSWORD });
  assert.is(options.status, 200, options.text);
  const creation = options.body.options;
  assert.is(creation.rp.id, new URL(service.url).hostname);
  assert.is(creation.user.name, account.email);
  assert.equal(creation.authenticatorSelection, { residentKey: 'required', userVerification: 'required', requireResidentKey: true });
  assert.is(creation.attestation, 'none');
  assert.match(creation.challenge, /^[\w-]{43}$/);

  const authenticator = createSoftAuthenticator(service.url);
  const seen = service.smtp.mailsTo(account.email).length;
  const added = await addPasskey(service, account.token, { name: 'Work laptop', response: authenticator.register(creation) });
  assert.is(added.status, 200, added.text);
  assert.is(added.body.passkey.name, 'Work laptop');
  assert.is(added.body.recovery_codes.length, 10);
  await nextMail(service, account.email, seen, /passkey was added/);
  const status = await mfaStatus(service, account.token);
  assert.is(status.totp, false);
  assert.equal(status.passkeys.map((passkey: { name: string }) => passkey.name), ['Work laptop']);
  assert.is(status.recovery_codes_left, 10);

  // A second one: its options exclude the first, and it brings no new codes.
  const second = await passkeyOptions(service, account.token, { password: PASSWORD, code: added.body.recovery_codes[0] });
  assert.equal(second.body.options.excludeCredentials.map((entry: { id: string }) => entry.id), [...authenticator.credentials.keys()]);
  const again = await addPasskey(service, account.token, { response: createSoftAuthenticator(service.url).register(second.body.options) });
  assert.is(again.status, 200, again.text);
  assert.is(again.body.recovery_codes, undefined);
  assert.is(again.body.passkey.name, 'Passkey 2');
});

test('an attestation that does not answer live options of this account is 400 INVALID_CODE, and nothing is stored', async ({ service }) => {
  const account = await registerAndVerify(service, 'passkey.forged@example.com');
  const other = await registerAndVerify(service, 'passkey.other@example.com');
  const authenticator = createSoftAuthenticator(service.url);
  const options = async (token = account.token) => (await passkeyOptions(service, token, { password: PASSWORD })).body.options;
  const refused = async (response: unknown, token = account.token) => {
    const answer = await addPasskey(service, token, { response });
    assertError(answer, 400, 'INVALID_CODE');
    assert.equal(answer.body.issues.map((issue: { path: string }) => issue.path), ['response']);
  };
  await refused(authenticator.register(await options(), { origin: 'https://evil.example' }));
  await refused(authenticator.register(await options(), { verified: false }));
  await refused(authenticator.register(await options(other.token)), account.token);
  const stale = await options();
  service.clock.advance(5 * 60_000 + 1_000);
  await refused(authenticator.register(stale));
  const fresh = authenticator.register(await options());
  assert.is((await addPasskey(service, account.token, { response: fresh })).status, 200);
  await refused(fresh);
  const [{ count }] = await service.deps.db.query<{ count: number }>('SELECT count(*)::int AS count FROM passkeys WHERE account_id = $1', [account.user.id]);
  assert.is(count, 1, 'only the good one');
});

test('sign-in with a passkey alone: discoverable options, then the assertion signs in with cookies; each answer works once', async ({ service }) => {
  const account = await accountWithPasskey(service, 'passkey.alone@example.com');
  const options = await signInOptions(service);
  assert.equal(options.allowCredentials ?? [], [], 'discoverable: the authenticator offers what it holds');
  assert.is(options.userVerification, 'required');
  assert.is(options.rpId, new URL(service.url).hostname);
  const assertion = account.authenticator.authenticate(options);
  const signedIn = await loginPasskey(service, assertion);
  assert.is(signedIn.status, 200, signedIn.text);
  assert.is(signedIn.body.user.email, account.email);
  assertError(await loginPasskey(service, assertion), 401, 'INVALID_CREDENTIALS');
  const status = await mfaStatus(service, signedIn.body.token);
  assert.ok(status.passkeys[0].last_used_at, 'its use is recorded');
});

test('a forged, unverified, foreign-origin or cloned passkey answer is 401 and signs nobody in', async ({ service }) => {
  const account = await accountWithPasskey(service, 'passkey.cloned@example.com');
  const refused = async (response: unknown) => assertError(await loginPasskey(service, response), 401, 'INVALID_CREDENTIALS');
  await refused(account.authenticator.authenticate(await signInOptions(service), { origin: 'https://evil.example' }));
  await refused(account.authenticator.authenticate(await signInOptions(service), { verified: false }));
  const stranger = createSoftAuthenticator(service.url);
  stranger.register({ challenge: 'x', rp: { id: new URL(service.url).hostname, name: 'x' }, user: { id: 'AAAA', name: 'x', displayName: 'x' }, pubKeyCredParams: [] });
  await refused(stranger.authenticate(await signInOptions(service)));
  const tampered = account.authenticator.authenticate(await signInOptions(service));
  await refused({ ...tampered, response: { ...tampered.response, signature: Buffer.alloc(70, 1).toString('base64url') } });
  await refused(account.authenticator.authenticate({ challenge: Buffer.alloc(32, 7).toString('base64url'), rpId: new URL(service.url).hostname }));
  // A clone of the authenticator answers with a counter the service has already seen.
  const cloneOf = account.authenticator.authenticate(await signInOptions(service));
  assert.is((await loginPasskey(service, cloneOf)).status, 200, 'the original signs in');
  const credential = [...account.authenticator.credentials.values()][0];
  credential.counter -= 2;
  await refused(account.authenticator.authenticate(await signInOptions(service)));
});

test('a passkey use spends its challenge once and counts only against the counter the check saw, in one statement', async ({ service }) => {
  const account = await accountWithPasskey(service, 'passkey.counter@example.com');
  const { db } = service.deps;
  const [passkey] = await db.query<{ id: string; counter: string }>('SELECT id, counter FROM passkeys WHERE account_id = $1', [account.user.id]);
  const challenge = async (name: string) => {
    await insertChallenge(db, service.clock, 'passkey_login', sha256(name), account.user.id, 60_000);
    return (await liveChallenge(db, service.clock, 'passkey_login', sha256(name)))!.id;
  };
  const stored = async () => (await db.query<{ counter: string }>('SELECT counter FROM passkeys WHERE id = $1', [passkey.id]))[0].counter;
  const seen = passkey.counter;
  const first = await challenge('counter-first');
  const second = await challenge('counter-second');
  assert.is(await useChallengeWithPasskey(db, service.clock, first, { id: passkey.id, seenCounter: seen, newCounter: Number(seen) + 1 }), true);
  assert.is(await stored(), String(Number(seen) + 1));
  // Checked against the same counter as the first, as two assertions racing would be.
  assert.is(await useChallengeWithPasskey(db, service.clock, second, { id: passkey.id, seenCounter: seen, newCounter: Number(seen) + 1 }), false, 'the counter moved');
  assert.is(await liveChallenge(db, service.clock, 'passkey_login', sha256('counter-second')), undefined, 'its challenge is spent all the same');
  assert.is(await useChallengeWithPasskey(db, service.clock, first, { id: passkey.id, seenCounter: await stored(), newCounter: Number(seen) + 5 }), false, 'a used challenge');
  assert.is(await stored(), String(Number(seen) + 1), 'and the counter stays');
});

test('as the second step after a password: MFA_REQUIRED names passkey, the options list the account’s passkeys, /login/mfa takes the answer', async ({ service }) => {
  const account = await accountWithPasskey(service, 'passkey.second@example.com');
  const other = await accountWithPasskey(service, 'passkey.second.other@example.com');
  const first = await login(service, account.email);
  assertError(first, 403, 'MFA_REQUIRED');
  assert.equal(first.body.methods, ['passkey', 'recovery_code']);
  assert.is(first.body.message, 'The password is right; now give a passkey or a recovery code.');
  const options = await signInOptions(service, { mfa_token: first.body.mfa_token });
  assert.equal(options.allowCredentials.map((entry: { id: string }) => entry.id), [...account.authenticator.credentials.keys()]);
  // Another account's passkey cannot finish this account's sign-in.
  const foreign = other.authenticator.authenticate({ ...options, allowCredentials: [] });
  assertError(await loginMfa(service, { mfa_token: first.body.mfa_token, response: foreign }), 401, 'INVALID_CREDENTIALS');
  const second = await loginMfa(service, { mfa_token: first.body.mfa_token, response: account.authenticator.authenticate(await signInOptions(service, { mfa_token: first.body.mfa_token })) });
  assert.is(second.status, 200, second.text);
  assert.is(second.body.user.id, account.user.id);
  assertError(await answerOf(auth(service).passkeyLoginOptions({ mfa_token: first.body.mfa_token } as never)), 400, 'INVALID_TOKEN');
});

test('as a step-up proof; removing needs the password and step-up; the last one takes the recovery codes with it', async ({ service }) => {
  const account = await accountWithPasskey(service, 'passkey.remove@example.com');
  const session = (await loginPasskey(service, account.authenticator.authenticate(await signInOptions(service)))).body.token;
  service.clock.advance(6 * 60_000);
  const refused = await removePasskey(service, session, account.passkeyId, { password: PASSWORD });
  assertError(refused, 403, 'STEP_UP_REQUIRED');
  assert.equal(refused.body.methods, ['passkey', 'recovery_code']);
  assertError(await removePasskey(service, session, account.passkeyId, { password: 'wrong', response: account.authenticator.authenticate(await signInOptions(service)) }), 401, 'INVALID_CREDENTIALS');
  const other = await accountWithPasskey(service, 'passkey.remove.other@example.com');
  const proof = account.authenticator.authenticate(await signInOptions(service));
  assertError(await removePasskey(service, session, other.passkeyId, { password: PASSWORD, response: proof }), 404, 'NOT_FOUND');
  const seen = service.smtp.mailsTo(account.email).length;
  const removed = await removePasskey(service, session, account.passkeyId, { password: PASSWORD });
  assert.is(removed.status, 200, `stepped up by the proof above: ${removed.text}`);
  await nextMail(service, account.email, seen, /passkey was removed/);
  assert.equal(await mfaStatus(service, session), { success: true, totp: false, passkeys: [], recovery_codes_left: 0 });
  assert.is((await login(service, account.email)).status, 200, 'the password alone signs in again');
  assertError(await loginPasskey(service, account.authenticator.authenticate(await signInOptions(service))), 401, 'INVALID_CREDENTIALS');
});

test('by API key, a passkey-only account cannot add a passkey or remove its own without a passkey proof, every time', async ({ service }) => {
  const account = await accountWithPasskey(service, 'passkey.apikey@example.com');
  // The review's path: a new passkey through the key, then a sign-in with it alone.
  const options = await passkeyOptions(service, account.apiKey, { password: PASSWORD });
  assertError(options, 403, 'STEP_UP_REQUIRED');
  assert.equal(options.body.methods, ['passkey', 'recovery_code']);
  const removal = await removePasskey(service, account.apiKey, account.passkeyId, { password: PASSWORD });
  assertError(removal, 403, 'STEP_UP_REQUIRED');
  assert.is((await mfaStatus(service, account.token)).passkeys.length, 1);
  // With the owner's passkey answer, once; the next call by key asks again.
  const proven = await passkeyOptions(service, account.apiKey, { password: PASSWORD, response: account.authenticator.authenticate(await signInOptions(service)) });
  assert.is(proven.status, 200, proven.text);
  assertError(await passkeyOptions(service, account.apiKey, { password: PASSWORD }), 403, 'STEP_UP_REQUIRED');
  const removed = await removePasskey(service, account.apiKey, account.passkeyId, { password: PASSWORD, response: account.authenticator.authenticate(await signInOptions(service)) });
  assert.is(removed.status, 200, removed.text);
});

test.run();
