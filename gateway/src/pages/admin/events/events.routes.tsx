import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { AppError, EVENT_TYPES } from '../../../../../server/src/index.ts';
import type { Notice } from '../../kit/components.tsx';
import type { FormFields } from '../../kit/form-body.ts';
import { queryText, type PageKit } from '../../kit/kit.tsx';
import { formRefusal, isRefusal } from '../../kit/refusals.ts';
import { type Console, type Operator } from '../console/console.tsx';
import { ConfirmPage } from '../console/console.view.tsx';
import { DeliveryPage, EndpointPage, EventsPage, SecretPage, typeField, type DeliveryFilter } from './events.view.tsx';

type Caller = ReturnType<PageKit['call']>;
type DeliveriesInput = NonNullable<Parameters<Caller['admin']['eventDeliveries']>[0]>;

const DONE: Record<string, Notice> = {
  removed: { tone: 'success', text: 'The endpoint and its deliveries are removed.' },
  enabled: { tone: 'success', text: 'The endpoint is enabled: new events are sent to it.' },
  disabled: { tone: 'success', text: 'The endpoint is disabled: nothing is sent to it until it is enabled.' },
  types: { tone: 'success', text: 'The event types are saved.' },
  retried: { tone: 'success', text: 'The delivery is sent again.' },
};
const DISABLED: Notice = { tone: 'error', text: 'The endpoint is disabled: enable it first. Nothing was sent.' };
const ADD_LABELS = { url: 'URL', description: 'Description', code: 'Code' };

const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());
const doneOf = (ctx: KoaContext): Notice | undefined => {
  const key = queryText(ctx, 'done') ?? '';
  if (Object.hasOwn(DONE, key)) return DONE[key];
  const retried = queryText(ctx, 'retried');
  return retried && /^\d{1,9}$/.test(retried) ? { tone: 'success', text: `${retried} dead or skipped deliveries are sent again.` } : undefined;
};
/** The event types ticked; none is every type (null), as the procedures take it. */
const typesOf = (form: FormFields) => {
  const ticked = EVENT_TYPES.filter((type) => form.text(typeField(type)) === 'on');
  return ticked.length ? ticked : undefined;
};
const endpointPath = (id: string) => `/admin/events/endpoints/${encodeURIComponent(id)}`;

export function mountEventsPages(router: Router, kit: PageKit, consolePages: Console): void {
  async function showList(ctx: KoaContext, operator: Operator, status: number, extras: { notice?: Notice; addForm?: ReturnType<typeof formRefusal>['form'] } = {}) {
    const filter: DeliveryFilter = { endpoint_id: given(queryText(ctx, 'endpoint_id')), state: given(queryText(ctx, 'state')), type: given(queryText(ctx, 'type')) };
    const cursor = ctx.method === 'GET' ? queryText(ctx, 'cursor') : undefined;
    const caller = kit.call(ctx);
    const [endpoints, deliveries] = await Promise.all([
      caller.admin.eventEndpoints(),
      caller.admin.eventDeliveries({ ...(filter as Omit<DeliveriesInput, 'cursor' | 'limit'>), cursor, limit: 50 }),
    ]);
    kit.send(ctx, status, <EventsPage operator={operator} endpoints={endpoints.items} deliveries={deliveries} filter={filter} paged={cursor !== undefined} {...extras} />);
  }

  /** The endpoint by its id, from the list (there are few); a 404 when there is none. */
  async function endpointOf(ctx: KoaContext) {
    const { items } = await kit.call(ctx).admin.eventEndpoints();
    const endpoint = items.find((item) => item.id === ctx.params.id);
    if (!endpoint) throw new AppError('NOT_FOUND');
    return endpoint;
  }

  async function showEndpoint(ctx: KoaContext, operator: Operator, status: number, notice?: Notice) {
    const endpoint = await endpointOf(ctx);
    const deliveries = await kit.call(ctx).admin.eventDeliveries({ endpoint_id: endpoint.id, limit: 10 });
    kit.send(ctx, status, <EndpointPage operator={operator} endpoint={endpoint} deliveries={deliveries} notice={notice} />);
  }

  consolePages.page(router, '/admin/events', (ctx, operator) => showList(ctx, operator, 200, { notice: doneOf(ctx) }));
  consolePages.page(router, '/admin/events/endpoints/:id', (ctx, operator) => showEndpoint(ctx, operator, 200, doneOf(ctx)));

  const back = (ctx: KoaContext) => ({ href: endpointPath(ctx.params.id), label: 'Back to the endpoint' });

  consolePages.action(
    router,
    '/admin/events/endpoints',
    ['url', 'description', ...EVENT_TYPES.map(typeField)],
    { confirm: () => ({ title: 'Add an endpoint', text: 'Confirm adding the endpoint.', button: 'Add the endpoint', back: { href: '/admin/events', label: 'Back to events out' } }) },
    async (ctx, form, operator) => {
      try {
        const description = given(form.text('description'));
        const created = await kit.call(ctx).admin.createEventEndpoint({ url: form.text('url').trim(), events: typesOf(form), ...(description ? { description } : {}) });
        kit.send(ctx, 200, <SecretPage operator={operator} endpoint={created.endpoint} secret={created.secret} rotated={false} />);
      } catch (error) {
        const labels = { ...ADD_LABELS, ...Object.fromEntries(EVENT_TYPES.map((type) => [typeField(type), type])) };
        const refusal = formRefusal(ctx, error, form, labels);
        await showList(ctx, operator, refusal.status, { notice: refusal.notice, addForm: refusal.form });
      }
    },
  );

  consolePages.action(
    router,
    '/admin/events/endpoints/:id/enabled',
    ['enabled'],
    { confirm: (ctx, form) => ({ title: form.text('enabled') === 'true' ? 'Enable the endpoint' : 'Disable the endpoint', text: 'Confirm the change.', button: 'Confirm', back: back(ctx) }) },
    async (ctx, form, operator) => {
      const enabled = form.text('enabled');
      if (enabled !== 'true' && enabled !== 'false') return showEndpoint(ctx, operator, 400, { tone: 'error', text: 'Choose enable or disable. Nothing was changed.' });
      await kit.call(ctx).admin.updateEventEndpoint({ id: ctx.params.id, enabled: enabled === 'true' });
      kit.redirect(ctx, `${endpointPath(ctx.params.id)}?done=${enabled === 'true' ? 'enabled' : 'disabled'}`);
    },
  );

  consolePages.action(
    router,
    '/admin/events/endpoints/:id/events',
    EVENT_TYPES.map(typeField),
    { confirm: (ctx) => ({ title: 'Change the event types', text: 'Confirm the event types ticked.', button: 'Save the event types', back: back(ctx) }) },
    async (ctx, form) => {
      await kit.call(ctx).admin.updateEventEndpoint({ id: ctx.params.id, events: typesOf(form) ?? null });
      kit.redirect(ctx, `${endpointPath(ctx.params.id)}?done=types`);
    },
  );

  consolePages.action(
    router,
    '/admin/events/endpoints/:id/rotate',
    ['grace_seconds'],
    { confirm: (ctx) => ({ title: 'Rotate the signing secret', text: 'Confirm making a new signing secret.', button: 'Rotate the secret', back: back(ctx) }) },
    async (ctx, form, operator) => {
      const grace = form.text('grace_seconds');
      if (!/^\d{1,6}$/.test(grace)) return showEndpoint(ctx, operator, 400, { tone: 'error', text: 'Choose how long the old secret keeps signing. Nothing was changed.' });
      const endpoint = await endpointOf(ctx);
      const { secret } = await kit.call(ctx).admin.rotateEventEndpointSecret({ id: endpoint.id, grace_seconds: Number(grace) });
      kit.send(ctx, 200, <SecretPage operator={operator} endpoint={endpoint} secret={secret} rotated />);
    },
  );

  consolePages.action(
    router,
    '/admin/events/endpoints/:id/test',
    [],
    { confirm: (ctx) => ({ title: 'Send a test', text: 'Confirm sending a ping event to this endpoint.', button: 'Send a test', back: back(ctx) }) },
    async (ctx, _form, operator) => {
      try {
        const { delivery_id } = await kit.call(ctx).admin.testEventEndpoint({ id: ctx.params.id });
        kit.redirect(ctx, `/admin/events/deliveries/${encodeURIComponent(delivery_id)}`);
      } catch (error) {
        if (!isRefusal(error, 'CONFLICT')) throw error;
        await showEndpoint(ctx, operator, 409, DISABLED);
      }
    },
  );

  consolePages.action(
    router,
    '/admin/events/endpoints/:id/retry-dead',
    [],
    { confirm: (ctx) => ({ title: 'Retry dead deliveries', text: 'Confirm sending the dead and skipped deliveries again.', button: 'Retry', back: back(ctx) }) },
    async (ctx, _form, operator) => {
      try {
        const { retried } = await kit.call(ctx).admin.retryDeadEventDeliveries({ id: ctx.params.id });
        kit.redirect(ctx, `${endpointPath(ctx.params.id)}?retried=${retried}`);
      } catch (error) {
        if (!isRefusal(error, 'CONFLICT')) throw error;
        await showEndpoint(ctx, operator, 409, DISABLED);
      }
    },
  );

  // Removing asks first: the confirmation is a page of its own, its button the only way to the POST.
  consolePages.page(router, '/admin/events/endpoints/:id/remove', async (ctx, operator) => {
    const endpoint = await endpointOf(ctx);
    const confirmation = {
      title: 'Remove the endpoint?',
      text: `${endpoint.url} and all its deliveries will be removed. Nothing more is sent to it, and this cannot be undone.`,
      button: 'Remove the endpoint',
      danger: true,
      action: `${endpointPath(endpoint.id)}/remove`,
      fields: { confirm: 'yes' },
      back: back(ctx),
    };
    kit.send(ctx, 200, <ConfirmPage viewer={operator} operator={operator} confirmation={confirmation} />);
  });
  consolePages.action(
    router,
    '/admin/events/endpoints/:id/remove',
    ['confirm'],
    { confirm: (ctx) => ({ title: 'Remove the endpoint?', text: 'The endpoint and all its deliveries will be removed.', button: 'Remove the endpoint', danger: true, back: back(ctx) }) },
    async (ctx, form, operator) => {
      if (form.text('confirm') !== 'yes') return showEndpoint(ctx, operator, 400, { tone: 'error', text: 'Removing asks for its confirmation page. Nothing was removed.' });
      await kit.call(ctx).admin.deleteEventEndpoint({ id: ctx.params.id });
      kit.redirect(ctx, '/admin/events?done=removed');
    },
  );

  async function showDelivery(ctx: KoaContext, operator: Operator, status: number, notice?: Notice) {
    const caller = kit.call(ctx);
    const [{ delivery }, endpoints] = await Promise.all([caller.admin.eventDelivery({ id: ctx.params.id }), caller.admin.eventEndpoints()]);
    const endpoint = endpoints.items.find((item) => item.id === delivery.endpoint_id);
    kit.send(ctx, status, <DeliveryPage operator={operator} delivery={delivery} endpoint={endpoint} notice={notice} />);
  }
  consolePages.page(router, '/admin/events/deliveries/:id', (ctx, operator) => showDelivery(ctx, operator, 200, doneOf(ctx)));
  consolePages.action(
    router,
    '/admin/events/deliveries/:id/retry',
    [],
    { confirm: (ctx) => ({ title: 'Retry the delivery', text: 'Confirm sending it again now.', button: 'Retry', back: { href: `/admin/events/deliveries/${encodeURIComponent(ctx.params.id)}`, label: 'Back to the delivery' } }) },
    async (ctx, _form, operator) => {
      try {
        await kit.call(ctx).admin.retryEventDelivery({ id: ctx.params.id });
        kit.redirect(ctx, `/admin/events/deliveries/${encodeURIComponent(ctx.params.id)}?done=retried`);
      } catch (error) {
        if (!isRefusal(error, 'CONFLICT')) throw error;
        await showDelivery(ctx, operator, 409, DISABLED);
      }
    },
  );
}
