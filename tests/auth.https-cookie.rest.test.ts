import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeJwt } from 'jose';
import { AUTH, bearer, registerAndVerify } from './helpers/auth.ts';
import { request, startTestService, type TestService } from './helpers/service.ts';

const PUBLIC_URL = 'https://gatehouse.example';

const test = suite<{ service: TestService }>('REST behind https: PUBLIC_URL=https://… and JWT_TTL=12h');

test.before(async (context) => {
  context.service = await startTestService({ PUBLIC_URL: `${PUBLIC_URL}/`, JWT_TTL: '12h' });
});
test.after(async ({ service }) => {
  await service?.close();
});

test('the session and device cookies add Secure; the session cookie carries Max-Age of JWT_TTL', async ({ service }) => {
  const account = await registerAndVerify(service, 'secure@example.com');
  const login = await request(service.url, 'POST', `${AUTH}/login`, { json: { email: account.email, password: account.password } });
  const [session, device, ...others] = login.headers.getSetCookie();
  assert.is(session, `svc_token=${login.body.token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure`);
  assert.match(device, new RegExp(`^svc_device=d1\\.${account.user.id}\\.[\\w-]{22}\\.[\\w-]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=31536000; Secure$`));
  assert.equal(others, []);
  const logout = await request(service.url, 'POST', `${AUTH}/logout`, { headers: bearer(login.body.token) });
  assert.equal(logout.headers.getSetCookie(), ['svc_token=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure']);
});

test('PUBLIC_URL is the JWT issuer and the base of mailed links', async ({ service }) => {
  const account = await registerAndVerify(service, 'issuer@example.com');
  const claims = decodeJwt(account.token);
  assert.is(claims.iss, PUBLIC_URL);
  assert.is(claims.exp! - claims.iat!, 43200);
  assert.match(service.smtp.mailsTo(account.email)[0].text, `${PUBLIC_URL}/verify-email?token=`);
});

test.run();
