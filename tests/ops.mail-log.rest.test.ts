import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH, MAIL_TIMEOUT_MS, PASSWORD, login } from './helpers/auth.ts';
import { request, startTestApp, type TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';

const test = suite<{ service: TestService }>('REST without SMTP_URL: e-mails are written to the log (development)');

test.before(async (context) => {
  context.service = await startTestApp({ SMTP_URL: '' });
});
test.after(async ({ service }) => {
  await service?.close();
});

/** The logged mails to `to`, once there are `count` of them: they are sent in the background. */
function loggedMails(service: TestService, to: string, count: number) {
  return eventually(`${count} logged mails to ${to}`, () => {
    const mails = service.logs.lines.map((line) => JSON.parse(line)).filter((line) => line.mail?.to === to);
    return mails.length >= count && mails;
  }, MAIL_TIMEOUT_MS);
}

test('the verification mail, with its link, is logged; the link works; nothing goes over SMTP', async ({ service }) => {
  const email = 'developer@example.com';
  const registered = await request(service.url, 'POST', `${AUTH}/register`, { json: { email, password: PASSWORD, name: 'Dev' } });
  assert.is(registered.status, 201);

  const [logged] = await loggedMails(service, email, 1);
  assert.ok(logged, 'a log line with the mail');
  assert.is(logged.level, 'info');
  assert.match(logged.mail.subject, /confirm/i);
  const link = new RegExp(`${service.env.PUBLIC_URL.replace(/\./g, '\\.')}/verify-email\\?token=([\\w-]+)`).exec(logged.mail.body);
  assert.ok(link, logged.mail.body);
  assert.not.match(JSON.stringify(logged), PASSWORD);

  const page = await request(service.url, 'GET', `/verify-email?token=${link[1]}`);
  assert.is(page.status, 200);
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token: link[1] } })).status, 200);
  assert.is((await login(service, email)).status, 200);
  assert.is(service.smtp.inbox.length, 0);
});

test('the "someone tried to register" mail is logged too', async ({ service }) => {
  const email = 'taken@example.com';
  assert.is((await request(service.url, 'POST', `${AUTH}/register`, { json: { email, password: PASSWORD, name: 'First' } })).status, 201);
  const [verification] = await loggedMails(service, email, 1);
  const token = /verify-email\?token=([\w-]+)/.exec(verification.mail.body)![1];
  assert.is((await request(service.url, 'POST', `${AUTH}/verify-email`, { json: { token } })).status, 200);
  await request(service.url, 'POST', `${AUTH}/register`, { json: { email, password: 'some other password', name: 'Someone Else' } });
  const mails = await loggedMails(service, email, 2);
  assert.is(mails.length, 2);
  assert.match(mails[1].mail.subject, /someone tried to register/i);
});

test.run();
