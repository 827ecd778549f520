import type { Command } from 'commander';
import { deliveryIdInput, listInboxInput } from '../admin/admin.schemas.ts';
import { INBOX_STATES } from '../webhooks/inbox/repo.ts';
import { addPurgeCommand, addReplayCommand } from './inbox-bulk.ts';
import { addFilterOptions, integerOption, type FilterOptions, type JsonOption } from './inbox-options.ts';
import { printDelivery, printPage, printStats } from './inbox-print.ts';
import { JSON_OPTION_HELP, printJson } from './output.ts';
import { CLI_ACTOR, withServices } from './session.ts';

async function stats(options: JsonOption): Promise<void> {
  const result = await withServices((admin, deps) => admin.inboxStats(deps, CLI_ACTOR));
  if (options.json) printJson(result);
  else printStats(result);
}

type ListOptions = FilterOptions & { state?: string; limit?: string; cursor?: string };

async function list(options: ListOptions): Promise<void> {
  // Checked as the API checks it, before any connection is made: a typo costs nothing.
  const input = listInboxInput.parse({
    provider: options.provider,
    state: options.state,
    since: options.since,
    until: options.until,
    cursor: options.cursor,
    limit: integerOption(options.limit),
  });
  const page = await withServices((admin, deps) => admin.listInbox(deps, CLI_ACTOR, input));
  if (options.json) printJson(page);
  else printPage(page);
}

async function show(id: string, options: JsonOption): Promise<void> {
  const input = deliveryIdInput.parse({ id });
  const result = await withServices((admin, deps) => admin.showDelivery(deps, CLI_ACTOR, input.id));
  if (options.json) printJson(result);
  else printDelivery(result);
}

/** `inbox stats|list|show|replay|purge`: the inbox of webhook deliveries (docs/OPERATIONS.md, Operator CLI). */
export function addInboxCommands(program: Command): void {
  const inbox = program.command('inbox').description('the webhook deliveries Gatehouse keeps: count, list, show, replay and purge them');

  inbox
    .command('stats')
    .description('deliveries per provider and state, and how long the oldest one still waiting has waited')
    .option('--json', JSON_OPTION_HELP)
    .action(stats);

  addFilterOptions(
    inbox
      .command('list')
      .description('deliveries newest first, filtered, a page at a time (the next page: --cursor from this one)')
      .option('--state <state>', `only deliveries in this state: ${INBOX_STATES.join(', ')}`),
  )
    .option('--limit <n>', 'deliveries per page, 1 to 200 (default 50)')
    .option('--cursor <cursor>', 'where the previous page ended (its next_cursor)')
    .option('--json', JSON_OPTION_HELP)
    .action(list);

  inbox
    .command('show')
    .description('one delivery with its payload as received')
    .argument('<id>', 'the delivery id (a uuid, as inbox list shows it)')
    .option('--json', JSON_OPTION_HELP)
    .action(show);

  addReplayCommand(inbox);
  addPurgeCommand(inbox);
}
