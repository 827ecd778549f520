import { Option, type Command } from 'commander';
import { z } from 'zod';
import { deliveryIdInput, listInboxInput, replayDeliveriesInput } from '../admin/admin.schemas.ts';
import type { Deps, InboxState } from '../index.ts';
import { addFilterOptions, PROVIDER_HELP, TIME_HELP, type FilterOptions } from './inbox-options.ts';
import { JSON_OPTION_HELP, printJson, printLine, UsageError } from './output.ts';
import { wantsProgressBar, withProgressBar, type OnProgress } from './progress.ts';
import { CLI_ACTOR, withServices } from './session.ts';

// The commands that change many rows: replay (one or in bulk) and purge.

/** The progress bar's upper bound: rows in those states (and provider), before the time filter. */
async function rowsIn(deps: Deps, states: InboxState[], provider: string | undefined): Promise<number> {
  const { countByProviderAndState } = await import('../index.ts');
  const counts = await countByProviderAndState(deps.db);
  return counts.filter((row) => states.includes(row.state) && (!provider || row.provider === provider)).reduce((sum, row) => sum + row.count, 0);
}

/** Runs a bulk job with a bar when a person watches, plainly otherwise. */
function bulk<T>(options: { json?: boolean }, label: string, estimate: () => Promise<number>, work: (onProgress?: OnProgress) => Promise<T>): Promise<T> {
  return wantsProgressBar(options) ? withProgressBar(label, estimate, work) : work();
}

const describeFilter = (filter: { provider?: string; since?: string; until?: string; before?: string }) =>
  [filter.provider && `from ${filter.provider}`, filter.since && `since ${filter.since}`, filter.until && `until ${filter.until}`, filter.before && `received before ${filter.before}`]
    .filter(Boolean)
    .join(', ');

type ReplayOptions = FilterOptions & { dead?: boolean; ignored?: boolean };

/** Exactly one of an id or a bulk flag: a filter without a bulk flag is a mistake, not "everything". */
function checkReplayChoice(id: string | undefined, options: ReplayOptions): void {
  const bulkFlag = options.dead || options.ignored;
  if (id && bulkFlag) throw new UsageError('give either a delivery id or --dead/--ignored, not both');
  if (!id && !bulkFlag) throw new UsageError('give a delivery id, or --dead or --ignored to replay every such delivery');
  if (id && (options.provider || options.since || options.until)) {
    throw new UsageError('--provider, --since and --until choose the deliveries of a bulk replay (--dead or --ignored); one id needs none');
  }
}

async function replayOne(id: string, options: ReplayOptions): Promise<void> {
  const input = deliveryIdInput.parse({ id });
  const result = await withServices((admin, deps) => admin.replayDelivery(deps, CLI_ACTOR, input.id));
  if (options.json) return printJson(result);
  printLine(`Delivery ${input.id} is queued again: a worker applies it through its handler.`);
}

async function replayMany(options: ReplayOptions): Promise<void> {
  const state = options.ignored ? 'ignored' : 'dead';
  const input = replayDeliveriesInput.parse({ provider: options.provider, state, since: options.since, until: options.until });
  const result = await withServices((admin, deps) =>
    bulk(options, 'replaying', () => rowsIn(deps, [state], input.provider), (onProgress) => admin.replayDeliveries(deps, CLI_ACTOR, input, onProgress)),
  );
  if (options.json) return printJson(result);
  const filter = describeFilter(input);
  printLine(`Replayed ${result.replayed} ${state} deliveries${filter ? ` (${filter})` : ''}: workers apply them again.`);
}

async function replay(id: string | undefined, options: ReplayOptions): Promise<void> {
  checkReplayChoice(id, options);
  await (id ? replayOne(id, options) : replayMany(options));
}

export function addReplayCommand(inbox: Command): void {
  addFilterOptions(
    inbox
      .command('replay')
      .description('apply deliveries again through their handlers, exactly once in effect: one by id, or every dead (--dead) or ignored (--ignored) one matching the filters')
      .argument('[id]', 'the delivery to replay')
      .addOption(new Option('--dead', 'replay every dead delivery matching the filters').conflicts('ignored'))
      .option('--ignored', 'replay every ignored delivery matching the filters'),
  )
    .option('--json', JSON_OPTION_HELP)
    .action(replay);
}

/** What purge may delete: never 'received', which is work still to do. */
const purgeInput = z.object({
  state: z.enum(['dead', 'processed', 'ignored']),
  before: listInboxInput.shape.until,
  provider: listInboxInput.shape.provider,
});

type PurgeOptions = { state: string; before?: string; provider?: string; yes?: boolean; json?: boolean };

async function purge(options: PurgeOptions): Promise<void> {
  const input = purgeInput.parse({ state: options.state, before: options.before, provider: options.provider });
  // Deleting cannot be undone, and a script that forgot a flag should fail, not delete.
  if (!options.yes) throw new UsageError(`inbox purge deletes ${input.state} deliveries for good; add --yes to go ahead`);
  const { purged, before } = await withServices(async (admin, deps) => {
    const filter = { states: [input.state], before: input.before ? new Date(input.before) : deps.clock.now(), provider: input.provider };
    const count = await bulk(options, 'purging', () => rowsIn(deps, filter.states, filter.provider), (onProgress) => admin.purgeDeliveries(deps, CLI_ACTOR, filter, onProgress));
    return { purged: count, before: filter.before.toISOString() };
  });
  if (options.json) return printJson({ success: true, purged });
  printLine(`Purged ${purged} ${input.state} deliveries (${describeFilter({ provider: input.provider, before })}).`);
}

export function addPurgeCommand(inbox: Command): void {
  inbox
    .command('purge')
    .description('delete deliveries in one state received before a time, for good (the worker already purges processed and ignored ones after INBOX_RETENTION_DAYS)')
    .requiredOption('--state <state>', 'the state to delete: dead, processed or ignored')
    .option('--before <time>', `only deliveries received before this time (${TIME_HELP}; default now)`)
    .option('--provider <name>', PROVIDER_HELP)
    .option('--yes', 'really delete; without it the command refuses (exit 2)')
    .option('--json', JSON_OPTION_HELP)
    .action(purge);
}
