import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Webhook } from 'standardwebhooks';
import { nextAttemptAt, RETRY_DELAYS_MS } from '../server/src/modules/events/events.sender.ts';
import { newSecret, signedHeaders } from '../server/src/modules/events/events.signing.ts';
import { redactedUrl } from '../server/src/modules/events/events.urls.ts';

// The pieces of events out that need no database: the Standard Webhooks signature (checked
// with the standardwebhooks package, not with our own code), the retry schedule, and what a
// log may show of an endpoint's URL.

test('a secret is whsec_ and base64 of 24 random bytes, new each time', () => {
  const secret = newSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  assert.is(Buffer.from(secret.slice(6), 'base64').length, 24);
  assert.is.not(newSecret(), secret);
});

test('the signature verifies with standardwebhooks under either secret of a rotation, and fails for a changed body', () => {
  const [older, newer] = [newSecret(), newSecret()];
  const body = JSON.stringify({ type: 'ping', timestamp: new Date().toISOString(), data: {} });
  const headers = signedHeaders('msg_abc', new Date(), body, [newer, older]);
  assert.equal(Object.keys(headers).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp']);
  assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
  for (const secret of [older, newer]) assert.equal(new Webhook(secret).verify(body, headers), JSON.parse(body));
  assert.throws(() => new Webhook(newSecret()).verify(body, headers));
  assert.throws(() => new Webhook(newer).verify(body.replace('ping', 'pong'), headers));
  // The timestamp is the attempt's, in unix seconds; one far off is refused by receivers.
  const stale = signedHeaders('msg_abc', new Date(Date.now() - 10 * 60_000), body, [newer]);
  assert.throws(() => new Webhook(newer).verify(body, stale));
});

test('the retry schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, each longer by up to 20%, then dead', () => {
  const now = new Date('2026-11-26T00:00:00Z');
  const expected = [5, 300, 1800, 7200, 18000, 36000, 36000].map((seconds) => seconds * 1000);
  assert.equal(RETRY_DELAYS_MS, expected);
  for (let step = 1; step <= 7; step++) {
    const base = expected[step - 1];
    assert.is(nextAttemptAt(now, step, () => 0)!.getTime() - now.getTime(), base, `after attempt ${step}, no jitter`);
    const most = nextAttemptAt(now, step, () => 0.999999)!.getTime() - now.getTime();
    assert.ok(most > base * 1.19 && most <= base * 1.2, `after attempt ${step}, most jitter: ${most}`);
  }
  assert.is(nextAttemptAt(now, 8), null, 'the eighth failure is the last');
});

test('a URL is logged without its credentials or query', () => {
  assert.is(redactedUrl('https://user:secret@hooks.example.com:8443/in/gatehouse?token=abc#x'), 'https://hooks.example.com:8443/in/gatehouse');
  assert.is(redactedUrl('not a url'), '(unparsable URL)');
});

test.run();
