/**
 * One request body (where the route takes one) and one success answer per REST operation,
 * by operationId, for the OpenAPI document and the docs page's try-it. They are made up:
 * no real token or key. tests/api-docs.openapi.rest.test.ts checks that every operation has
 * them and that each one passes its procedure's own input or output schema.
 */
export type OperationExamples = { request?: unknown; response: unknown };

const API_KEY = '6f1b7c2e9a4d3f5b8c0e1a2d4f6b8c0e2a4c6e8f0b2d4f6a8c0e2b4d6f8a0c2e';
const JWT =
  'eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiSldUIn0.eyJzdWIiOiI0MiIsInNpZCI6IjlmM2MiLCJpc3MiOiJodHRwczovL2dhdGVob3VzZS5leGFtcGxlIn0.bm90LWEtcmVhbC1zaWduYXR1cmU';
const CREATED_AT = '2026-11-23T12:00:00.000Z';

const USER = {
  id: 42,
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  company: 'Analytical Engines Ltd',
  plan: 'free',
  role: 'user',
  api_key: API_KEY,
  email_verified: true,
  created_at: CREATED_AT,
};

/** What an administrator is shown of an account: never its key. */
const { api_key: _apiKey, ...ACCOUNT } = USER;

/** An endpoint of events out, as the operators see it (never its secret). */
const EVENT_ENDPOINT = {
  id: '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
  url: 'https://profiles.internal.example/hooks/gatehouse',
  description: 'Public profiles',
  events: ['account.created', 'account.updated', 'account.deleted'],
  enabled: true,
  created_at: CREATED_AT,
};

const EVENT_DELIVERY = {
  id: '3f0c2a9e-7b1d-4c6e-9a52-8d4e1f0b6c73',
  endpoint_id: EVENT_ENDPOINT.id,
  event_id: 'msg_2ZbQm9xVt4KcR7wLp0aN1eYd',
  type: 'account.updated',
  state: 'delivered',
  attempts: 2,
  last_status: 200,
  last_error: null,
  next_attempt_at: null,
  created_at: '2026-11-23T12:05:00.000Z',
};

const message = (text: string) => ({ success: true, message: text });
const SUCCESS = { success: true };
const TOKEN = 'Zx3q9Kp2Lw7Vb5Nm1Rt8Yc4Hd6Jf0Gs2Ua9Ie3Ok7Pl';

const DELIVERY = {
  id: '0b6f3c1e-5d2a-4c8e-9f47-2a1d6e8b3c90',
  provider: 'payment',
  scope: 'site_Jq8mXk9pL3vR2tYw5nBz7cDe',
  external_id: 'evt_1QxYz2AbCdEfGhIj',
  state: 'dead',
  received_at: '2026-11-23T11:58:02.114Z',
  processed_at: null,
  attempts: 5,
  last_error: 'database unavailable',
  reason: null,
};

// WebAuthn values as the browser sends them: base64url, made up, not a real credential.
const CREDENTIAL_ID = 'Tg2Yh7mXqE0kq3pQyq9p1d8yLx2f0c4n7r6w5s1a3bU';
const CHALLENGE = 'pX3mK9qL2vN8rT5wY1zA4bC7dE0fG6hJ3kM9nP2qR5s';
const ASSERTION = {
  id: CREDENTIAL_ID,
  rawId: CREDENTIAL_ID,
  type: 'public-key',
  response: {
    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoicFgzbUs5cUwydk44clQ1d1kxekE0YkM3ZEUwZkc2aEoza005blAycVI1cyJ9',
    authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
    signature: 'MEUCIQDxexample0signature0not0real0AiB0example0signature0not0real0Q',
    userHandle: 'q1w2e3r4t5y6u7i8o9p0aa',
  },
  clientExtensionResults: {},
  authenticatorAttachment: 'platform',
};
const ATTESTATION = {
  id: CREDENTIAL_ID,
  rawId: CREDENTIAL_ID,
  type: 'public-key',
  response: {
    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoicFgzbUs5cUwydk44clQ1d1kxekE0YkM3ZEUwZkc2aEoza005blAycVI1cyJ9',
    attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjFexample',
    transports: ['internal', 'hybrid'],
  },
  clientExtensionResults: {},
  authenticatorAttachment: 'platform',
};
const RECOVERY_CODES = ['k7m2p-x9d4t', 'h3q8z-w2n6c', 'r5t9b-m4k7e', 'y2p6d-s8x3g', 'a9f4h-t6r2m', 'n3c7k-q5w9p', 'e8g2x-z4b6t', 'w6s3m-h9d2r', 'p4k8q-c7y5a', 'z2x9t-g6m3k'];
const PASSKEY = { id: '5b1f6c2e-8d3a-4e7b-9c1f-2a6d8e0b4c3f', name: 'Work laptop', created_at: CREATED_AT, last_used_at: null };
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  'auth-register': {
    request: { email: 'ada@example.com', password: 'correct horse battery staple', name: 'Ada Lovelace', company: 'Analytical Engines Ltd' },
    response: { success: true, requires_verification: true, message: 'Check your inbox: we sent a link to confirm your e-mail address.' },
  },
  'auth-verifyEmail': {
    request: { token: TOKEN },
    response: message('Your e-mail address is confirmed. You can log in now.'),
  },
  'auth-resendVerification': {
    request: { email: 'ada@example.com' },
    response: message('If an unverified account uses this address, a new confirmation link is on its way.'),
  },
  'auth-login': {
    request: { email: 'ada@example.com', password: 'correct horse battery staple' },
    response: { success: true, token: JWT, user: USER },
  },
  'auth-loginMfa': { request: { mfa_token: TOKEN, code: '287082' }, response: { success: true, token: JWT, user: USER } },
  'auth-passkeyLoginOptions': {
    request: {},
    response: { success: true, options: { challenge: CHALLENGE, timeout: 300000, rpId: 'gatehouse.example', userVerification: 'required', allowCredentials: [] } },
  },
  'auth-loginPasskey': { request: { response: ASSERTION }, response: { success: true, token: JWT, user: USER } },
  'auth-me': { response: { success: true, user: USER } },
  // An empty body, or none: the route takes no field, and refuses any it is sent.
  'auth-logout': { request: {}, response: SUCCESS },
  'auth-accessToken': {
    request: { audience: 'bookings' },
    response: {
      success: true,
      access_token:
        'eyJhbGciOiJFZERTQSIsInR5cCI6ImF0K2p3dCIsImtpZCI6Ing3ZENTMEZCVW5fSkVoVWJWN0lwaFJGUWVMTWRjOURXQ1gzWFlseTlXSlEifQ.eyJzdWIiOiI0MiIsImF1ZCI6ImJvb2tpbmdzIiwiYW1yIjpbInB3ZCJdfQ.bm90LWEtcmVhbC1zaWduYXR1cmU',
      token_type: 'Bearer',
      expires_in: 300,
    },
  },
  'auth-forgotPassword': {
    request: { email: 'ada@example.com' },
    response: message('If an account uses this address, a link to choose a new password is on its way.'),
  },
  'auth-resetPassword': {
    request: { token: TOKEN, password: 'a new and longer passphrase' },
    response: message('Your password is changed, and every session was signed out. You can log in now.'),
  },
  'auth-changePassword': {
    request: { current_password: 'correct horse battery staple', new_password: 'a new and longer passphrase' },
    response: SUCCESS,
  },
  'auth-rotateApiKey': {
    request: { grace_seconds: 3600 },
    response: { success: true, api_key: '0c9e7a5f3d1b9f7e5c3a1f9d7b5e3c1a0f8d6b4e2c0a8f6d4b2e0c8a6f4d2b0e' },
  },
  'auth-listSessions': {
    response: {
      success: true,
      sessions: [
        { id: '9f3c2b1a-7d6e-4f5a-8b9c-0d1e2f3a4b5c', created_at: CREATED_AT, last_used_at: '2026-11-23T12:41:07.000Z', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)', via: 'password', current: true },
        { id: '2a4c6e8f-1b3d-4e5f-9a7c-8e6d4c2b0a19', created_at: '2026-11-20T08:15:00.000Z', last_used_at: null, ip: null, user_agent: null, via: 'google', current: false },
      ],
    },
  },
  'auth-revokeSession': { response: SUCCESS },
  'auth-revokeAllSessions': { request: { keep_current: true }, response: { success: true, revoked: 3 } },
  'auth-changeEmail': {
    request: { new_email: 'ada@analytical.example', password: 'correct horse battery staple' },
    response: message('Check the new address: we sent it a link to confirm the change. Until then your address stays as it is.'),
  },
  'auth-pendingEmailChange': {
    response: { success: true, pending: { new_email: 'ada@analytical.example', requested_at: CREATED_AT, expires_at: '2026-11-24T12:00:00.000Z' } },
  },
  'auth-cancelEmailChange': { request: {}, response: message('The e-mail change was cancelled: its link no longer works.') },
  'auth-confirmEmailChange': {
    request: { token: TOKEN },
    response: message('Your new e-mail address is confirmed: use it to log in from now on.'),
  },
  'auth-updateProfile': { request: { name: 'Ada King', company: null }, response: { success: true, user: { ...USER, name: 'Ada King', company: null } } },
  'auth-deleteAccount': { request: { password: 'correct horse battery staple' }, response: SUCCESS },
  'auth-stepUpStatus': { response: { success: true, required: true, methods: ['totp', 'recovery_code'], stepped_up_until: null } },
  'auth-stepUp': {
    request: { code: '287082' },
    response: { success: true, required: true, methods: ['totp', 'recovery_code'], stepped_up_until: '2026-12-01T09:35:00.000Z' },
  },
  'auth-mfaStatus': { response: { success: true, totp: true, passkeys: [PASSKEY], recovery_codes_left: 10 } },
  'auth-setupTotp': {
    request: { password: 'correct horse battery staple' },
    response: { success: true, secret: TOTP_SECRET, otpauth_url: `otpauth://totp/Gatehouse:ada%40example.com?issuer=Gatehouse&secret=${TOTP_SECRET}&algorithm=SHA1&digits=6&period=30` },
  },
  'auth-enableTotp': { request: { code: '287082' }, response: { success: true, recovery_codes: RECOVERY_CODES } },
  'auth-disableTotp': { request: { password: 'correct horse battery staple', code: '287082' }, response: SUCCESS },
  'auth-regenerateRecoveryCodes': { request: { password: 'correct horse battery staple', code: '287082' }, response: { success: true, recovery_codes: RECOVERY_CODES } },
  'auth-passkeyOptions': {
    request: { password: 'correct horse battery staple' },
    response: {
      success: true,
      options: {
        challenge: CHALLENGE,
        rp: { name: 'Gatehouse', id: 'gatehouse.example' },
        user: { id: 'q1w2e3r4t5y6u7i8o9p0aa', name: 'ada@example.com', displayName: 'Ada Lovelace' },
        pubKeyCredParams: [{ alg: -8, type: 'public-key' }, { alg: -7, type: 'public-key' }, { alg: -257, type: 'public-key' }],
        timeout: 300000,
        attestation: 'none',
        excludeCredentials: [],
        authenticatorSelection: { residentKey: 'required', userVerification: 'required', requireResidentKey: true },
      },
    },
  },
  'auth-addPasskey': { request: { name: 'Work laptop', response: ATTESTATION }, response: { success: true, passkey: PASSKEY, recovery_codes: RECOVERY_CODES } },
  'auth-removePasskey': { request: { password: 'correct horse battery staple', code: '287082' }, response: SUCCESS },
  'auth-oauthProviders': {
    response: {
      success: true,
      providers: [
        { name: 'google', label: 'Google', start_url: 'https://gatehouse.example/api/v1/auth/oauth/google/start' },
        { name: 'github', label: 'GitHub', start_url: 'https://gatehouse.example/api/v1/auth/oauth/github/start' },
      ],
    },
  },
  'auth-identities': {
    response: { success: true, identities: [{ provider: 'google', label: 'Google', email: 'ada@example.com', linked_at: CREATED_AT }], has_password: true },
  },
  'auth-linkIdentity': {
    request: { password: 'correct horse battery staple', next: '/account' },
    response: { success: true, start_url: 'https://gatehouse.example.com/api/v1/auth/oauth/google/start?intent=link&ticket=v2.Kx8aQ2mb.8QsbtQ1b8iW4qUXK.N9vXvxYc-dOa7l2yRkxnCw.Zk8rWbE3Hq5sJdT2aLkz0pYw8c4uFvGmR1nXeB6tQyI&next=%2Faccount' },
  },
  'auth-unlinkIdentity': { request: { password: 'correct horse battery staple' }, response: SUCCESS },
  'auth-listActivity': {
    response: {
      success: true,
      items: [
        { event: 'login.succeeded', at: '2026-11-23T12:40:59.000Z', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)' },
        { event: 'email.verified', at: '2026-11-23T12:02:11.000Z', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)' },
        { event: 'account.registered', at: CREATED_AT, ip: null, user_agent: null },
      ],
    },
  },
  'admin-inboxStats': {
    response: {
      success: true,
      providers: [
        { provider: 'billing', received: 0, processed: 1204, ignored: 31, dead: 0, oldest_pending_seconds: null },
        { provider: 'payment', received: 2, processed: 8812, ignored: 140, dead: 1, oldest_pending_seconds: 3 },
        { provider: 'operator', received: 0, processed: 57, ignored: 12, dead: 0, oldest_pending_seconds: null },
        { provider: 'messengerone', received: 0, processed: 3310, ignored: 205, dead: 0, oldest_pending_seconds: null },
        { provider: 'messengertwo', received: 0, processed: 918, ignored: 77, dead: 0, oldest_pending_seconds: null },
      ],
    },
  },
  'admin-listInbox': { response: { success: true, items: [DELIVERY], next_cursor: null } },
  'admin-showDelivery': {
    response: {
      success: true,
      delivery: { ...DELIVERY, payload: '{"id":"evt_1QxYz2AbCdEfGhIj","object":"event","type":"payment_intent.succeeded","created":1795435082,"data":{"object":{"id":"pi_3QxYz2AbCdEfGhIj","amount":4900,"currency":"eur"}}}' },
    },
  },
  'admin-replayDelivery': { response: SUCCESS },
  'admin-replayDeliveries': {
    request: { provider: 'payment', state: 'dead', since: '2026-11-23T00:00:00Z' },
    response: { success: true, replayed: 1 },
  },
  'admin-findAccount': { response: { success: true, account: { ...ACCOUNT, mfa: true } } },
  'admin-revokeSessions': { response: { success: true, revoked: 2 } },
  'admin-resetMfa': { response: SUCCESS },
  'admin-overview': {
    response: {
      success: true,
      accounts: { total: 18204, verified: 16917, mfa: 2210, new_7d: 312 },
      logins: Array.from({ length: 24 }, (_, hour) => ({
        hour: new Date(Date.parse('2026-11-22T13:00:00.000Z') + hour * 3_600_000).toISOString(),
        succeeded: 40 + ((hour * 37) % 90),
        failed: (hour * 7) % 12,
      })),
      inbox: [
        { provider: 'billing', received: 0, processed: 1204, ignored: 31, dead: 0, oldest_pending_seconds: null },
        { provider: 'payment', received: 2, processed: 8812, ignored: 140, dead: 1, oldest_pending_seconds: 3 },
        { provider: 'operator', received: 0, processed: 57, ignored: 12, dead: 0, oldest_pending_seconds: null },
        { provider: 'messengerone', received: 0, processed: 3310, ignored: 205, dead: 0, oldest_pending_seconds: null },
        { provider: 'messengertwo', received: 0, processed: 918, ignored: 77, dead: 0, oldest_pending_seconds: null },
      ],
      endpoints: [{ id: EVENT_ENDPOINT.id, url: EVENT_ENDPOINT.url, enabled: true, oldest_pending_seconds: 42 }],
      recent_actions: [
        { at: '2026-11-23T11:58:02.000Z', admin_id: 7, type: 'admin.role_changed', account_id: 42 },
        { at: '2026-11-23T09:14:40.000Z', admin_id: null, type: 'admin.deliveries_replayed', account_id: null },
        { at: '2026-11-20T08:00:13.000Z', admin_id: null, type: 'account.promoted', account_id: 7 },
      ],
    },
  },
  'admin-searchAccounts': {
    response: { success: true, items: [{ id: 42, email: 'ada@example.com', name: 'Ada Lovelace', plan: 'free', role: 'user', email_verified: true, mfa: true, created_at: CREATED_AT }], next_cursor: '42' },
  },
  'admin-account': {
    response: {
      success: true,
      account: { ...ACCOUNT, mfa: true },
      identities: [{ provider: 'github', subject: '583231', email: 'ada@example.com', linked_at: '2026-11-23T12:10:00.000Z' }],
      sessions: [
        { id: '9f3c2b1a-6d5e-4f70-8a9b-0c1d2e3f4a5b', created_at: '2026-11-23T12:40:59.000Z', last_used_at: '2026-11-23T13:02:17.000Z', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)', via: 'password' },
      ],
      activity: [
        { event: 'login.succeeded', at: '2026-11-23T12:40:59.000Z', ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (X11; Linux x86_64)' },
        { event: 'account.registered', at: CREATED_AT, ip: null, user_agent: null },
      ],
    },
  },
  'admin-setRole': { request: { role: 'admin' }, response: { success: true, account: { ...ACCOUNT, role: 'admin', mfa: true }, changed: true } },
  'admin-resendVerification': { response: SUCCESS },
  'admin-createEventEndpoint': {
    request: { url: 'https://profiles.internal.example/hooks/gatehouse', events: ['account.created', 'account.updated', 'account.deleted'], description: 'Public profiles' },
    response: { success: true, endpoint: EVENT_ENDPOINT, secret: 'whsec_bm90LWEtcmVhbC1zZWNyZXQtanVzdC1hbi1leGFtcGxl' },
  },
  'admin-eventEndpoints': { response: { success: true, items: [EVENT_ENDPOINT] } },
  'admin-updateEventEndpoint': { request: { enabled: true }, response: { success: true, endpoint: EVENT_ENDPOINT } },
  'admin-rotateEventEndpointSecret': { request: { grace_seconds: 3600 }, response: { success: true, secret: 'whsec_YW5vdGhlci1tYWRlLXVwLXNlY3JldC1ieXRlcw==' } },
  'admin-deleteEventEndpoint': { response: SUCCESS },
  'admin-eventDeliveries': { response: { success: true, items: [EVENT_DELIVERY], next_cursor: null } },
  'admin-eventDelivery': {
    response: {
      success: true,
      delivery: {
        ...EVENT_DELIVERY,
        body: '{"type":"account.updated","timestamp":"2026-11-23T12:05:00.000Z","data":{"account":{"id":42,"email":"ada@example.com","name":"Ada Lovelace","company":"Analytical Engines Ltd","plan":"pro","role":"user","email_verified":true,"created_at":"2026-11-23T12:00:00.000Z"},"changed":["plan"]}}',
        attempts_log: [
          { at: '2026-11-23T12:05:00.120Z', status: 503, error: 'HTTP 503: upstream unavailable', ms: 41 },
          { at: '2026-11-23T12:05:05.480Z', status: 200, error: null, ms: 12 },
        ],
      },
    },
  },
  'admin-retryEventDelivery': { response: SUCCESS },
  'admin-retryDeadEventDeliveries': { request: { since: '2026-11-23T00:00:00Z' }, response: { success: true, retried: 14 } },
  'admin-testEventEndpoint': { response: { success: true, delivery_id: '3f0c2a9e-7b1d-4c6e-9a52-8d4e1f0b6c73' } },
};
