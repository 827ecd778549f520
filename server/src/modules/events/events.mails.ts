import type { Mail } from '../../lib/mailer.ts';
import { composeMail } from '../../lib/mail-template.ts';
import { redactedUrl } from './events.urls.ts';

/** To each admin when the sender disables an endpoint that has had no 2xx for five days. */
export function endpointDisabledNotice(to: string, name: string, endpoint: { id: string; url: string; failingSince: Date }, publicUrl: string): Mail {
  return composeMail({
    to,
    subject: 'A Gatehouse event endpoint was disabled',
    title: 'An event endpoint was disabled',
    paragraphs: [
      `Hello ${name},`,
      `The event endpoint ${endpoint.id} (${redactedUrl(endpoint.url)}) has answered no delivery with a 2xx since ${endpoint.failingSince.toISOString()}, so it was disabled. Its new events are kept as skipped and nothing is sent to it.`,
      'When it works again, enable it (PATCH /api/v1/admin/event-endpoints/{id} with enabled: true) and send what it missed with retry-dead, or with `npm run admin -- events endpoints update` and `events deliveries retry`.',
      `Operator API: ${publicUrl}/api/v1/docs`,
    ],
  });
}
