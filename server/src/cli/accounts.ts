import type { Command } from 'commander';
import { parseBareEmail } from '../lib/text.ts';
import { JSON_OPTION_HELP, printJson, printLine, UsageError } from './output.ts';
import { CLI_ACTOR, withServices } from './session.ts';

type Role = 'admin' | 'user';

/** Addresses are kept lower-cased and NFC-normalised; the operator may type them either way. */
export function emailArgument(text: string): string {
  const email = parseBareEmail(text);
  if (!email) throw new UsageError(`<email>: "${text}" is not a bare e-mail address (local@domain)`);
  return email;
}

async function changeRole(text: string, role: Role, options: { json?: boolean }): Promise<void> {
  const email = emailArgument(text);
  const { account, changed } = await withServices((admin, deps) => admin.setRole(deps, CLI_ACTOR, { email }, role));
  if (options.json) return printJson({ success: true, account, changed });
  const { id } = account;
  printLine(changed ? `${email} (account ${id}) is now ${role === 'admin' ? 'an administrator' : 'a regular user'}.` : `${email} (account ${id}) already had role ${role}; nothing changed.`);
}

/** `promote <email>` and `demote <email>`: the only way to make an administrator (docs/OPERATIONS.md, Operator CLI). */
export function addAccountCommands(program: Command): void {
  program
    .command('promote')
    .description('give the account with this e-mail address the role admin (it may then call the admin.* procedures)')
    .argument('<email>', 'the e-mail address the account signs in with')
    .option('--json', JSON_OPTION_HELP)
    .action((email: string, options: { json?: boolean }) => changeRole(email, 'admin', options));

  program
    .command('demote')
    .description('take the role admin away from the account with this e-mail address (back to user)')
    .argument('<email>', 'the e-mail address the account signs in with')
    .option('--json', JSON_OPTION_HELP)
    .action((email: string, options: { json?: boolean }) => changeRole(email, 'user', options));
}
