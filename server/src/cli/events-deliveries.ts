import type { Command } from 'commander';
import { eventsAdminSchemas as s } from '../admin/admin.schemas.ts';
import { DELIVERY_STATES_HELP, explainDisabledEndpoint, parseNamed, withEvents } from './events-options.ts';
import { printDeliveries, printDelivery } from './events-print.ts';
import { integerOption, TIME_HELP, type JsonOption } from './inbox-options.ts';
import { JSON_OPTION_HELP, printJson, printLine, UsageError } from './output.ts';
import { CLI_ACTOR } from './session.ts';

// `events deliveries list|show|retry`: each event as sent to each endpoint (docs/OPERATIONS.md,
// Operator CLI). Only the endpoint's id is shown here, never its URL.

type ListOptions = JsonOption & { endpoint?: string; state?: string; type?: string; limit?: string; cursor?: string };

async function list(options: ListOptions): Promise<void> {
  // Checked as the API checks it, before any connection is made.
  const input = s.listDeliveriesInput.parse({
    endpoint_id: options.endpoint,
    state: options.state,
    type: options.type,
    cursor: options.cursor,
    limit: integerOption(options.limit),
  });
  const page = await withEvents((events, deps) => events.listDeliveries(deps, CLI_ACTOR, input));
  if (options.json) return printJson(page);
  printDeliveries(page);
}

async function show(id: string, options: JsonOption): Promise<void> {
  const input = s.deliveryIdInput.parse({ id });
  const shown = await withEvents((events, deps) => events.showDelivery(deps, CLI_ACTOR, input.id));
  if (options.json) return printJson(shown);
  printDelivery(shown.delivery);
}

type RetryOptions = JsonOption & { dead?: boolean; endpoint?: string; since?: string };

/** Exactly one of an id or --dead with its endpoint: a filter without --dead is a mistake, not "everything". */
function checkRetryChoice(id: string | undefined, options: RetryOptions): void {
  if (id && options.dead) throw new UsageError('give either a delivery id or --dead, not both');
  if (!id && !options.dead) throw new UsageError("give a delivery id, or --dead --endpoint <id> to retry an endpoint's dead and skipped deliveries");
  if (id && (options.endpoint || options.since)) throw new UsageError('--endpoint and --since choose the deliveries of --dead; one id needs neither');
  if (options.dead && !options.endpoint) throw new UsageError('--dead needs --endpoint <id>: the endpoint whose dead and skipped deliveries to retry');
}

async function retryOne(id: string, options: RetryOptions): Promise<void> {
  const input = s.deliveryIdInput.parse({ id });
  const retried = await explainDisabledEndpoint(() => withEvents((events, deps) => events.retryDelivery(deps, CLI_ACTOR, input.id)));
  if (options.json) return printJson(retried);
  printLine(`Delivery ${input.id} is queued again from the start of the schedule, with the same event id; a running worker sends it at once.`);
}

async function retryDead(options: RetryOptions): Promise<void> {
  const input = parseNamed(s.retryDeadInput, { id: options.endpoint, since: options.since }, { id: '--endpoint' });
  const result = await explainDisabledEndpoint(() => withEvents((events, deps) => events.retryDeadDeliveries(deps, CLI_ACTOR, input.id, input.since)));
  if (options.json) return printJson(result);
  printLine(`Queued ${result.retried} dead and skipped deliveries of endpoint ${input.id} again${input.since ? ` (made since ${input.since})` : ''}: a running worker sends them.`);
}

async function retry(id: string | undefined, options: RetryOptions): Promise<void> {
  checkRetryChoice(id, options);
  await (id ? retryOne(id, options) : retryDead(options));
}

export function addDeliveryCommands(events: Command): void {
  const deliveries = events.command('deliveries').description('each event as sent to each endpoint: list, show and retry them');

  deliveries
    .command('list')
    .description('deliveries newest first, filtered, a page at a time (the next page: --cursor from this one)')
    .option('--endpoint <id>', "only this endpoint's deliveries (its id)")
    .option('--state <state>', DELIVERY_STATES_HELP)
    .option('--type <type>', `only events of this type: ${[...s.EVENT_TYPES, 'ping'].join(', ')}`)
    .option('--limit <n>', 'deliveries per page, 1 to 200 (default 50)')
    .option('--cursor <cursor>', 'where the previous page ended (its next_cursor)')
    .option('--json', JSON_OPTION_HELP)
    .action(list);

  deliveries
    .command('show')
    .description('one delivery with its last attempts (status, time taken, the start of a failed answer) and the body it sends')
    .argument('<id>', 'the delivery id (a uuid, as events deliveries list shows it)')
    .option('--json', JSON_OPTION_HELP)
    .action(show);

  deliveries
    .command('retry')
    .description("send deliveries again from the start of the schedule: one by id, or an endpoint's dead and skipped ones (--dead --endpoint)")
    .argument('[id]', 'the delivery to send again')
    .option('--dead', "retry the endpoint's dead and skipped deliveries")
    .option('--endpoint <id>', 'with --dead: the endpoint (its id)')
    .option('--since <time>', `with --dead: only deliveries made at or after this time (${TIME_HELP})`)
    .option('--json', JSON_OPTION_HELP)
    .action(retry);
}
