import type { Command } from 'commander';
import { addDeliveryCommands } from './events-deliveries.ts';
import { addEndpointCommands } from './events-endpoints.ts';

/** `events endpoints …` and `events deliveries …`: events out (docs/OPERATIONS.md, Operator CLI), as the admin API manages them. */
export function addEventsCommands(program: Command): void {
  const events = program.command('events').description('events out: the endpoints that receive our signed webhooks, and each delivery to them');
  addEndpointCommands(events);
  addDeliveryCommands(events);
}
