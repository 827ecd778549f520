import type { Command } from 'commander';
import { emailArgument } from './accounts.ts';
import { JSON_OPTION_HELP, printJson, printLine } from './output.ts';
import { CLI_ACTOR, withServices } from './session.ts';

async function resetMfa(text: string, options: { json?: boolean }): Promise<void> {
  const email = emailArgument(text);
  const { account, removed } = await withServices((admin, deps) => admin.resetAccountMfa(deps, CLI_ACTOR, { email }));
  if (options.json) return printJson({ success: true, account, removed });
  const what = [removed.totp ? 'its authenticator app' : '', removed.passkeys ? `${removed.passkeys} ${removed.passkeys === 1 ? 'passkey' : 'passkeys'}` : ''].filter(Boolean);
  if (!what.length) return printLine(`${email} (account ${account.id}) had no second factor: nothing was changed, and no notice was mailed.`);
  printLine(`${email} (account ${account.id}) has no second factor now: ${what.join(' and ')} removed, with its recovery codes.`);
  printLine('Its password alone signs in; its owner was mailed a notice.');
}

/** `mfa reset <email>` (docs/OPERATIONS.md, Operator CLI): for an owner who lost every second factor. */
export function addMfaCommands(program: Command): void {
  const mfa = program.command('mfa').description("accounts' second factor: turn it off for an owner who lost it");
  mfa
    .command('reset')
    .description(
      'turn off the second factor of the account with this e-mail address: its authenticator app, passkeys and recovery ' +
        'codes are removed, so its password alone signs in again, and its owner is mailed. Make sure who is asking first.',
    )
    .argument('<email>', 'the e-mail address the account signs in with')
    .option('--json', JSON_OPTION_HELP)
    .action(resetMfa);
}
