import { Option, type Command } from 'commander';
import { eventsAdminSchemas as s } from '../admin/admin.schemas.ts';
import { EVENT_TYPES_HELP, eventTypesOption, explainDisabledEndpoint, parseNamed, withEvents, withNamedIssues } from './events-options.ts';
import { printEndpoint, printEndpoints, printSecret } from './events-print.ts';
import { integerOption, type JsonOption } from './inbox-options.ts';
import { JSON_OPTION_HELP, printJson, printLine, UsageError } from './output.ts';
import { CLI_ACTOR } from './session.ts';

// `events endpoints add|list|update|rotate|remove|test`: the services of the platform that
// receive our signed events (docs/OPERATIONS.md, Operator CLI). A secret is printed only by
// add and rotate, the once it is made.

const ID_HELP = 'the endpoint id (a uuid, as events endpoints list shows it)';
const DESCRIPTION_HELP = 'a note for the operators, at most 500 characters';

type AddOptions = JsonOption & { events?: string; description?: string };

async function add(url: string, options: AddOptions): Promise<void> {
  // Checked as the API checks it, before any connection is made.
  const input = parseNamed(s.createEndpointInput, { url, events: eventTypesOption(options.events) ?? undefined, description: options.description }, { url: '<url>' });
  const created = await withNamedIssues(() => withEvents((events, deps) => events.createEndpoint(deps, CLI_ACTOR, input)), { url: '<url>' });
  if (options.json) return printJson(created);
  printLine('Endpoint added: it receives these events from now on, signed with the secret below.');
  printEndpoint(created.endpoint);
  printSecret(created.secret, created.endpoint.id);
}

async function list(options: JsonOption): Promise<void> {
  const listed = await withEvents((events, deps) => events.listEndpoints(deps, CLI_ACTOR));
  if (options.json) return printJson(listed);
  printEndpoints(listed.items);
}

type UpdateOptions = JsonOption & { url?: string; events?: string; enable?: boolean; disable?: boolean; description?: string };

function updateInput(id: string, options: UpdateOptions) {
  const enabled = options.enable ? true : options.disable ? false : undefined;
  const input = s.updateEndpointInput.parse({ id, url: options.url, events: eventTypesOption(options.events), enabled, description: options.description });
  if ([input.url, input.events, input.enabled, input.description].every((field) => field === undefined)) {
    throw new UsageError('say what to change: --url, --events, --enable or --disable, --description');
  }
  return input;
}

async function update(id: string, options: UpdateOptions): Promise<void> {
  const input = updateInput(id, options);
  const updated = await withEvents((events, deps) => events.updateEndpoint(deps, CLI_ACTOR, input));
  if (options.json) return printJson(updated);
  printLine(`Endpoint ${input.id} is changed.`);
  printEndpoint(updated.endpoint);
  if (input.enabled === false) printLine(`\nNothing is sent to it now. Once enabled, events deliveries retry --dead --endpoint ${input.id} sends what was skipped.`);
  if (input.enabled === true) printLine(`\nNew events are sent to it again; older skipped ones only with events deliveries retry --dead --endpoint ${input.id}.`);
}

async function rotate(id: string, options: JsonOption & { grace?: string }): Promise<void> {
  const input = s.rotateSecretInput.parse({ id, grace_seconds: integerOption(options.grace) });
  const rotated = await withEvents((events, deps) => events.rotateEndpointSecret(deps, CLI_ACTOR, input.id, input.grace_seconds));
  if (options.json) return printJson(rotated);
  const grace = input.grace_seconds ?? 0;
  printLine(`Endpoint ${input.id} has a new secret. ${grace ? `The old one goes on signing beside it for ${grace} s.` : 'The old one no longer signs.'}`);
  printSecret(rotated.secret, input.id);
}

async function remove(id: string, options: JsonOption): Promise<void> {
  const input = s.endpointIdInput.parse({ id });
  const removed = await withEvents((events, deps) => events.deleteEndpoint(deps, CLI_ACTOR, input.id));
  if (options.json) return printJson(removed);
  printLine(`Endpoint ${input.id} is removed, with its deliveries: nothing more is sent to it.`);
}

async function test(id: string, options: JsonOption): Promise<void> {
  const input = s.endpointIdInput.parse({ id });
  const tested = await explainDisabledEndpoint(() => withEvents((events, deps) => events.testEndpoint(deps, CLI_ACTOR, input.id)));
  if (options.json) return printJson(tested);
  printLine(`A ping is queued for endpoint ${input.id} as delivery ${tested.delivery_id}; a running worker sends it at once.`);
  printLine(`Follow it with events deliveries show ${tested.delivery_id}.`);
}

export function addEndpointCommands(events: Command): void {
  const endpoints = events.command('endpoints').description('the endpoints that receive our signed events: add, list, update, rotate, remove, test');

  endpoints
    .command('add')
    .description('add an endpoint; prints it and its signing secret, which is shown this once')
    .argument('<url>', 'where events are POSTed (http or https)')
    .option('--events <types>', `${EVENT_TYPES_HELP} (default all)`)
    .option('--description <text>', DESCRIPTION_HELP)
    .option('--json', JSON_OPTION_HELP)
    .action(add);

  endpoints.command('list').description('every endpoint, with its URL and event types (never a secret)').option('--json', JSON_OPTION_HELP).action(list);

  endpoints
    .command('update')
    .description('change an endpoint: its URL, event types, description, or whether it is sent to (disabled, new events are kept as skipped)')
    .argument('<id>', ID_HELP)
    .option('--url <url>', 'where events are POSTed from now on (http or https)')
    .option('--events <types>', EVENT_TYPES_HELP)
    .addOption(new Option('--enable', 'send to it again (new events; older skipped ones with events deliveries retry --dead)').conflicts('disable'))
    .option('--disable', 'stop sending to it: what was pending and new events are kept as skipped')
    .option('--description <text>', `${DESCRIPTION_HELP} ("" clears it)`)
    .option('--json', JSON_OPTION_HELP)
    .action(update);

  endpoints
    .command('rotate')
    .description('give an endpoint a new signing secret and print it, shown this once')
    .argument('<id>', ID_HELP)
    .option('--grace <seconds>', 'how long the old secret still signs beside the new one, 0 to 86400 (default 0)')
    .option('--json', JSON_OPTION_HELP)
    .action(rotate);

  endpoints.command('remove').description('remove an endpoint and its deliveries').argument('<id>', ID_HELP).option('--json', JSON_OPTION_HELP).action(remove);

  endpoints
    .command('test')
    .description('queue a ping event (data {}) for this endpoint alone and print its delivery id')
    .argument('<id>', ID_HELP)
    .option('--json', JSON_OPTION_HELP)
    .action(test);
}
