import * as assert from 'uvu/assert';
import type { Account } from './auth.ts';
import { answerOf, callerOf } from './caller.ts';
import { EventReceiver } from './event-receiver.ts';
import type { TestService } from './service.ts';
import { eventually } from './wait.ts';

// Events out as the suites set them up: endpoints an administrator makes (the admin procedures,
// in process), each pointing at a receiver of its own, and the account change that emits.

/** A suite's service and its administrator. */
export type Operated = { service: TestService; admin: Account };

/** The admin procedures, called as the suite's administrator. */
export const operator = ({ service, admin }: Operated) => callerOf(service, { bearer: admin.token }).admin;

/** A receiver and an endpoint pointing at it (at `url` when given), told the endpoint's secret; `close` removes both. */
export async function endpointFor(context: Operated, fields: Record<string, unknown> = {}, url?: (receiver: EventReceiver) => string) {
  const receiver = await EventReceiver.start();
  const created = await operator(context).createEventEndpoint({ url: url ? url(receiver) : receiver.url, ...fields } as never);
  receiver.secrets = [created.secret];
  const id = created.endpoint.id;
  const close = async () => {
    const removed = await answerOf(operator(context).deleteEventEndpoint({ id }));
    assert.ok(removed.status === 200 || removed.status === 404, removed.text);
    await receiver.close();
  };
  return { receiver, id, secret: created.secret, endpoint: created.endpoint, close };
}

/** The events `receiver` has had, once there are `count` of them. */
export const deliveredTo = (receiver: EventReceiver, count: number, what = `${count} events delivered`) =>
  eventually(what, () => (receiver.delivered().length >= count ? receiver.delivered() : undefined));

/** Sends the endpoint a ping (admin.testEventEndpoint); its delivery's id. */
export const ping = async (context: Operated, id: string): Promise<string> => (await operator(context).testEventEndpoint({ id })).delivery_id;

/** Renames `who` (auth.updateProfile): an account.updated event when the name is new. */
export async function changeName(service: TestService, who: Account, name: string): Promise<void> {
  const changed = await callerOf(service, { bearer: who.token }).auth.updateProfile({ name });
  assert.is(changed.success, true);
}
