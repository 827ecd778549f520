import type { Command } from 'commander';
import { PROVIDER_NAMES } from '../webhooks/provider.ts';

export type JsonOption = { json?: boolean };
export type FilterOptions = JsonOption & { provider?: string; since?: string; until?: string };

export const PROVIDER_HELP = `only deliveries that came in on this endpoint: ${PROVIDER_NAMES.join(', ')}`;
export const TIME_HELP = 'ISO-8601 with an offset, e.g. 2026-11-23T12:00:00Z';

/** --provider, --since and --until, said the same way on every command that filters. */
export function addFilterOptions(command: Command): Command {
  return command
    .option('--provider <name>', PROVIDER_HELP)
    .option('--since <time>', `only deliveries received at or after this time (${TIME_HELP})`)
    .option('--until <time>', 'only deliveries received before this time');
}

/**
 * The number as typed, for the API's schema to judge: "500" is a number it refuses by name
 * (--limit), and anything else is NaN, which it refuses the same way.
 */
export function integerOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  return /^-?\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
}
