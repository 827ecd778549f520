import { Command, CommanderError } from 'commander';
import { addAccountCommands } from './accounts.ts';
import { addAuditCommands } from './audit.ts';
import { addEventsCommands } from './events.ts';
import { addInboxCommands } from './inbox.ts';
import { addMigrateCommands } from './migrations.ts';
import { EXIT, EXIT_CODES_HELP, reportFailure } from './output.ts';
import { addSecretsCommands } from './secrets.ts';
import { addMfaCommands } from './mfa.ts';
import { addSessionsCommands } from './sessions.ts';

// `npm run admin -- <command>`: the operator's commands (docs/OPERATIONS.md, Operator CLI). They call the
// same services as the admin procedures, straight on the database, so they work while the
// gateway is down.

function buildProgram(): Command {
  // Set before any subcommand is added: commander copies these settings to the ones it creates.
  const program = new Command('admin')
    .usage('<command> [options]   (as npm run admin -- <command> [options])')
    .description("Gatehouse operator commands: administrators, accounts' sessions, the webhook inbox, the activity log, events out, the database schema, stored secrets.")
    .exitOverride()
    .showSuggestionAfterError()
    .showHelpAfterError('(add --help for usage)');
  addAccountCommands(program);
  addSessionsCommands(program);
  addMfaCommands(program);
  addInboxCommands(program);
  addAuditCommands(program);
  addEventsCommands(program);
  addMigrateCommands(program);
  addSecretsCommands(program);
  for (const command of everyCommand(program)) command.addHelpText('after', EXIT_CODES_HELP);
  return program;
}

function* everyCommand(command: Command): Generator<Command> {
  yield command;
  for (const sub of command.commands) yield* everyCommand(sub);
}

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    // Commander has already printed its help or its complaint; only the exit code is left.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return await reportFailure(error);
  }
}

// `… | head` closes stdout early: the reader has all it wanted, which is no reason for a stack.
// Output is printed after the work is done and the database closed, so nothing is cut short.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
  throw error;
});

process.exitCode = await main(process.argv);
// Everything is closed by now; a timer a library left behind must not keep an operator waiting.
setTimeout(() => process.exit(), 2000).unref();
