import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import type { Notice } from '../../kit/components.tsx';
import { queryText, type PageKit } from '../../kit/kit.tsx';
import { filterErrors, FILTER_REFUSED, type Console } from '../console/console.tsx';
import { InboxDeliveryPage, InboxPage, type InboxFilter } from './inbox.view.tsx';

type ListInput = NonNullable<Parameters<ReturnType<PageKit['call']>['admin']['listInbox']>[0]>;
type ReplayInput = NonNullable<Parameters<ReturnType<PageKit['call']>['admin']['replayDeliveries']>[0]>;

const FILTER_LABELS = { provider: 'Provider', state: 'State', since: 'Received from', until: 'Received before' };

/** A filter left empty is no filter; anything else goes to the procedure as typed, which checks it. */
const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

function filterOf(ctx: KoaContext): InboxFilter {
  return { provider: given(queryText(ctx, 'provider')), state: given(queryText(ctx, 'state')), since: given(queryText(ctx, 'since')), until: given(queryText(ctx, 'until')) };
}

export function mountInboxPages(router: Router, kit: PageKit, consolePages: Console): void {
  consolePages.page(router, '/admin/inbox', async (ctx, operator) => {
    const filter = filterOf(ctx);
    const cursor = queryText(ctx, 'cursor');
    const replayed = queryText(ctx, 'replayed');
    const notice: Notice | undefined = replayed && /^\d{1,9}$/.test(replayed) ? { tone: 'success', text: `${replayed} deliveries were applied again.` } : undefined;
    // The enums are the procedure's to check: a value outside them is its 400, said under its field.
    try {
      const list = await kit.call(ctx).admin.listInbox({ ...(filter as Omit<ListInput, 'cursor' | 'limit'>), cursor, limit: 50 });
      kit.send(ctx, 200, <InboxPage operator={operator} filter={filter} list={list} paged={cursor !== undefined} notice={notice} />);
    } catch (error) {
      const errors = filterErrors(error, FILTER_LABELS);
      if (!errors) throw error;
      kit.send(ctx, 400, <InboxPage operator={operator} filter={filter} list={{ success: true, items: [], next_cursor: null }} paged={false} notice={FILTER_REFUSED} errors={errors} />);
    }
  });

  consolePages.page(router, '/admin/inbox/:id', async (ctx, operator) => {
    const { delivery } = await kit.call(ctx).admin.showDelivery({ id: ctx.params.id });
    const notice: Notice | undefined = queryText(ctx, 'done') === 'replayed' ? { tone: 'success', text: 'The delivery was applied again.' } : undefined;
    kit.send(ctx, 200, <InboxDeliveryPage operator={operator} delivery={delivery} notice={notice} />);
  });

  consolePages.action(
    router,
    '/admin/inbox/:id/replay',
    [],
    { confirm: (ctx) => ({ title: 'Replay the delivery', text: 'Confirm applying this delivery again.', button: 'Replay', back: { href: `/admin/inbox/${encodeURIComponent(ctx.params.id)}`, label: 'Back to the delivery' } }) },
    async (ctx) => {
      await kit.call(ctx).admin.replayDelivery({ id: ctx.params.id });
      kit.redirect(ctx, `/admin/inbox/${encodeURIComponent(ctx.params.id)}?done=replayed`);
    },
  );

  const REPLAY_FIELDS = ['provider', 'state', 'since', 'until'] as const;
  consolePages.action(
    router,
    '/admin/inbox/replay',
    REPLAY_FIELDS,
    { confirm: (_ctx, form) => ({ title: 'Replay deliveries', text: `Confirm applying every ${form.text('state') || 'dead'} delivery of the filter again.`, button: 'Replay', back: { href: '/admin/inbox', label: 'Back to the inbox' } }) },
    async (ctx, form) => {
      const input = Object.fromEntries(REPLAY_FIELDS.filter((name) => given(form.text(name))).map((name) => [name, form.text(name).trim()])) as ReplayInput;
      const { replayed } = await kit.call(ctx).admin.replayDeliveries(input);
      const back = new URLSearchParams({ ...(input as Record<string, string>), replayed: String(replayed) });
      kit.redirect(ctx, `/admin/inbox?${back.toString()}`);
    },
  );
}
