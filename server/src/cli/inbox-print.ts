import type { AdminService } from './session.ts';
import { printLine, printTable } from './output.ts';

// How the inbox commands read to a person; with --json they print the API's documents instead.

type Stats = Awaited<ReturnType<AdminService['inboxStats']>>;
type Page = Awaited<ReturnType<AdminService['listInbox']>>;
type Shown = Awaited<ReturnType<AdminService['showDelivery']>>;

/** 45s, 12m, 3h 5m, 2d 4h: how long the oldest delivery has waited, at a glance. */
export function formatAge(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86400)}d ${Math.floor((seconds % 86400) / 3600)}h`;
}

export function printStats({ providers }: Stats): void {
  printTable(
    ['provider', 'received', 'processed', 'ignored', 'dead', 'oldest pending'],
    providers.map((p) => [p.provider, String(p.received), String(p.processed), String(p.ignored), String(p.dead), formatAge(p.oldest_pending_seconds)]),
  );
}

export function printPage({ items, next_cursor }: Page): void {
  if (!items.length) return printLine('No deliveries match.');
  printTable(
    ['received at', 'id', 'provider', 'scope', 'state', 'attempts', 'external id'],
    items.map((d) => [d.received_at, d.id, d.provider, d.scope || '-', d.state, String(d.attempts), d.external_id]),
  );
  if (next_cursor) printLine(`\nMore: add --cursor ${next_cursor}`);
}

export function printDelivery({ delivery }: Shown): void {
  const fields: Array<[string, string | number | null]> = [
    ['id', delivery.id],
    ['provider', delivery.provider],
    ['scope', delivery.scope || '-'],
    ['external id', delivery.external_id],
    ['state', delivery.state],
    ['received at', delivery.received_at],
    ['processed at', delivery.processed_at ?? '-'],
    ['attempts', delivery.attempts],
    ['last error', delivery.last_error ?? '-'],
    ['reason', delivery.reason ?? '-'],
  ];
  for (const [name, value] of fields) printLine(`${`${name}:`.padEnd(14)}${value}`);
  printLine('payload:');
  printLine(delivery.payload);
}
