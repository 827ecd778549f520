import type { Command } from 'commander';
import { emailArgument } from './accounts.ts';
import { JSON_OPTION_HELP, printJson, printLine } from './output.ts';
import { CLI_ACTOR, withServices } from './session.ts';

async function revokeSessions(text: string, options: { json?: boolean }): Promise<void> {
  const email = emailArgument(text);
  const { account, revoked } = await withServices((admin, deps) => admin.revokeAccountSessions(deps, CLI_ACTOR, { email }));
  if (options.json) return printJson({ success: true, account, revoked });
  printLine(`${email} (account ${account.id}) is signed out everywhere: ${revoked} ${revoked === 1 ? 'session' : 'sessions'} ended.`);
  printLine('Its pending e-mail-change and password reset links no longer work, and its owner was mailed a notice.');
}

/** `sessions revoke <email>` (docs/OPERATIONS.md, Operator CLI): "sign out everywhere" for an account. */
export function addSessionsCommands(program: Command): void {
  const sessions = program.command('sessions').description("accounts' sessions: sign an account out everywhere");
  sessions
    .command('revoke')
    .description(
      'sign the account with this e-mail address out everywhere: every live session ends on every instance, its pending ' +
        'e-mail-change and reset links are voided, and its owner is mailed. Its password and API key stay.',
    )
    .argument('<email>', 'the e-mail address the account signs in with')
    .option('--json', JSON_OPTION_HELP)
    .action(revokeSessions);
}
