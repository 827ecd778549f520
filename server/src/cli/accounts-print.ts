import type { AdminService } from './session.ts';
import { printLine, printTable } from './output.ts';

// How the account commands read to a person; with --json they print the API's documents instead.

type Page = Awaited<ReturnType<AdminService['searchAccounts']>>;
type Shown = Awaited<ReturnType<AdminService['accountDetails']>>;

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

export function printAccounts({ items, next_cursor }: Page): void {
  if (!items.length) return printLine('No accounts match.');
  printTable(
    ['id', 'email', 'name', 'plan', 'role', 'verified', 'mfa', 'created at'],
    items.map((a) => [String(a.id), a.email, a.name, a.plan, a.role, yesNo(a.email_verified), yesNo(a.mfa), a.created_at]),
  );
  if (next_cursor) printLine(`\nMore: add --cursor ${next_cursor}`);
}

export function printAccount({ account, identities, sessions, activity }: Shown): void {
  const fields: Array<[string, string | number]> = [
    ['id', account.id],
    ['email', account.email],
    ['name', account.name],
    ['company', account.company ?? '-'],
    ['plan', account.plan],
    ['role', account.role],
    ['verified', yesNo(account.email_verified)],
    ['second factor', yesNo(account.mfa)],
    ['created at', account.created_at],
  ];
  for (const [name, value] of fields) printLine(`${`${name}:`.padEnd(15)}${value}`);
  printLine('\nidentities:');
  if (identities.length) printTable(['  provider', 'subject', 'email', 'linked at'], identities.map((i) => [`  ${i.provider}`, i.subject, i.email ?? '-', i.linked_at]));
  else printLine('  none');
  printLine('\nlive sessions:');
  if (sessions.length) {
    printTable(['  last used', 'via', 'ip', 'device'], sessions.map((s) => [`  ${s.last_used_at ?? s.created_at}`, s.via, s.ip ?? '-', s.user_agent ?? '-']));
  } else printLine('  none');
  printLine('\nlatest activity:');
  if (activity.length) printTable(['  at', 'event', 'ip'], activity.map((e) => [`  ${e.at}`, e.event, e.ip ?? '-']));
  else printLine('  none');
}
