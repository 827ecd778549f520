import type { Command } from 'commander';
import { z } from 'zod';
import { accountIdInput, searchAccountsInput, setRoleInput, type Role } from '../admin/admin.schemas.ts';
import { parseBareEmail } from '../lib/text.ts';
import { printAccount, printAccounts } from './accounts-print.ts';
import { integerOption, type JsonOption } from './inbox-options.ts';
import { JSON_OPTION_HELP, printJson, printLine, UsageError } from './output.ts';
import { CLI_ACTOR, withServices } from './session.ts';

/** Addresses are kept lower-cased and NFC-normalised; the operator may type them either way. */
export function emailArgument(text: string): string {
  const email = parseBareEmail(text);
  if (!email) throw new UsageError(`<email>: "${text}" is not a bare e-mail address (local@domain)`);
  return email;
}

async function changeRole(text: string, role: Role, options: JsonOption): Promise<void> {
  const email = emailArgument(text);
  const { account, changed } = await withServices((admin, deps) => admin.setRole(deps, CLI_ACTOR, { email }, role));
  if (options.json) return printJson({ success: true, account, changed });
  const { id } = account;
  printLine(changed ? `${email} (account ${id}) is now ${role === 'admin' ? 'an administrator' : 'a regular user'}.` : `${email} (account ${id}) already had role ${role}; nothing changed.`);
}

/** `role set <email> <role>`: the role checked as the API checks it, before anything loads. */
const roleSetInput = z.strictObject({ role: setRoleInput.shape.role });

async function setRole(email: string, role: string, options: JsonOption): Promise<void> {
  await changeRole(email, roleSetInput.parse({ role }).role, options);
}

type ListOptions = JsonOption & { q?: string; limit?: string; cursor?: string };

async function list(options: ListOptions): Promise<void> {
  // Checked as the API checks it, before any connection is made.
  const input = searchAccountsInput.parse({ q: options.q, limit: integerOption(options.limit), cursor: options.cursor });
  const page = await withServices((admin, deps) => admin.searchAccounts(deps, CLI_ACTOR, input));
  if (options.json) return printJson(page);
  printAccounts(page);
}

/** An account id (digits) or an e-mail address, as the operator has one or the other at hand. */
function accountArgument(text: string): { id: number } | { email: string } {
  if (/^\s*\d+\s*$/.test(text)) {
    const parsed = accountIdInput.safeParse({ id: text.trim() });
    if (!parsed.success) throw new UsageError(`<account>: "${text}" is not an account id (a whole number from 1 to 2147483647)`);
    return { id: parsed.data.id };
  }
  const email = parseBareEmail(text);
  if (!email) throw new UsageError(`<account>: "${text}" is neither an account id nor a bare e-mail address (local@domain)`);
  return { email };
}

async function show(text: string, options: JsonOption): Promise<void> {
  const target = accountArgument(text);
  const shown = await withServices((admin, deps) => admin.accountDetails(deps, CLI_ACTOR, target));
  if (options.json) return printJson(shown);
  printAccount(shown);
}

/**
 * `promote <email>`, `demote <email>` and `role set <email> <role>`: who is an administrator;
 * `accounts list` and `accounts show`: accounts as the console shows them (docs/OPERATIONS.md,
 * Operator CLI).
 */
export function addAccountCommands(program: Command): void {
  program
    .command('promote')
    .description('give the account with this e-mail address the role admin (it may then call the admin.* procedures)')
    .argument('<email>', 'the e-mail address the account signs in with')
    .option('--json', JSON_OPTION_HELP)
    .action((email: string, options: JsonOption) => changeRole(email, 'admin', options));

  program
    .command('demote')
    .description('take the role admin away from the account with this e-mail address (back to user); never from the last admin (exit 1)')
    .argument('<email>', 'the e-mail address the account signs in with')
    .option('--json', JSON_OPTION_HELP)
    .action((email: string, options: JsonOption) => changeRole(email, 'user', options));

  program
    .command('role')
    .description("accounts' roles")
    .command('set')
    .description('give the account with this e-mail address a role: admin or user (as promote and demote do; never the last admin made a user)')
    .argument('<email>', 'the e-mail address the account signs in with')
    .argument('<role>', 'admin or user')
    .option('--json', JSON_OPTION_HELP)
    .action(setRole);

  const accounts = program.command('accounts').description('accounts as the console shows them: search and show');
  accounts
    .command('list')
    .description('accounts newest first, a page at a time (the next page: --cursor from this one)')
    .option('--q <text>', 'only accounts whose e-mail address starts with this (any case), or whose id it is')
    .option('--limit <n>', 'accounts per page, 1 to 200 (default 50)')
    .option('--cursor <cursor>', 'where the previous page ended (its next_cursor)')
    .option('--json', JSON_OPTION_HELP)
    .action(list);

  accounts
    .command('show')
    .description('one account without its API key: its identity providers, live sessions and latest activity')
    .argument('<account>', 'the account id, or the e-mail address it signs in with')
    .option('--json', JSON_OPTION_HELP)
    .action(show);
}
