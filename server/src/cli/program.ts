import { Command, CommanderError } from 'commander';
import { addAccountCommands } from './accounts.ts';
import { addAuditCommands } from './audit.ts';
import { addEventsCommands } from './events.ts';
import { forwardToService, runOnService, ServedByService } from './forward.ts';
import { addInboxCommands } from './inbox.ts';
import { cliIo, processIo, runWithIo, type CliIo, type CliStream } from './io.ts';
import { addMigrateCommands } from './migrations.ts';
import { EXIT, EXIT_CODES_HELP, reportFailure } from './output.ts';
import { addSecretsCommands } from './secrets.ts';
import { addMfaCommands } from './mfa.ts';
import { addSessionsCommands } from './sessions.ts';
import { addTokensCommands } from './tokens.ts';

// The operator's commands (docs/OPERATIONS.md, Operator CLI). They call the same services as
// the admin procedures, straight on the database, so they work while the gateway is down;
// beside a running service on the embedded database, whose files serve one process, that
// service runs them (forward.ts, serve.ts). admin.ts runs them as the binary; a test may run
// them in process (runAdminCommand).

function buildProgram(): Command {
  const io = cliIo();
  // Set before any subcommand is added: commander copies these settings to the ones it creates.
  const program = new Command('admin')
    .usage('<command> [options]   (as npm run admin -- <command> [options])')
    .description("Gatehouse operator commands: administrators, accounts' sessions, the webhook inbox, the activity log, events out, the database schema, stored secrets, access-token keys.")
    .configureOutput({
      // Commander's defaults, on the command's io rather than the process's.
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      getOutHelpWidth: () => terminalWidth(io.stdout),
      getErrHelpWidth: () => terminalWidth(io.stderr),
    })
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
  addTokensCommands(program);
  for (const command of everyCommand(program)) command.addHelpText('after', EXIT_CODES_HELP);
  return program;
}

/** A terminal's width, as commander's default reads it; none (commander then wraps at 80) for anything else. */
const terminalWidth = (stream: CliStream) => (stream.isTTY ? stream.columns : undefined) as number;

function* everyCommand(command: Command): Generator<Command> {
  yield command;
  for (const sub of command.commands) yield* everyCommand(sub);
}

/**
 * Runs one command as `admin <args…>` would, and gives its exit code (EXIT). `args` are the
 * words after the program's name (`['inbox', 'stats', '--json']`: process.argv.slice(2) for
 * the binary). Everything it prints goes to `io.stdout` and `io.stderr`, its settings come
 * from `io.env`: the process's own unless given, so a test can run it in process.
 */
export function runAdminCommand(args: string[], io: CliIo = processIo()): Promise<number> {
  return runWithIo(io, async () => {
    // Beside a running service on the embedded database, the service runs it (serve.ts).
    const forwarded = io.deps ? undefined : await forwardToService(args, io);
    if (forwarded !== undefined) return forwarded;
    try {
      await buildProgram().parseAsync(args, { from: 'user' });
      return EXIT.ok;
    } catch (error) {
      // Commander has already printed its help or its complaint; only the exit code is left.
      if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      // A service took DATA_DIR after the look above (it was starting): it runs the command,
      // which has printed nothing yet (commands print once their work is done, or, as audit
      // export does, from inside it).
      if (error instanceof ServedByService) return runOnService(error.socket, args, io);
      return await reportFailure(error);
    }
  });
}
