import type { Command } from 'commander';
import { auditFilterInput } from '../admin/admin.schemas.ts';
import { TIME_HELP } from './inbox-options.ts';
import { cliIo } from './io.ts';
import { CLI_ACTOR, withServices } from './session.ts';

type ExportOptions = { since?: string; until?: string; account?: string };

/** Waits for stdout to take more when a slow reader (`| gzip > file`) has it full. */
async function writeOut(text: string): Promise<void> {
  const { stdout } = cliIo();
  if (stdout.write(text) === false && stdout.once) await new Promise<void>((resolve) => stdout.once!('drain', resolve));
}

/**
 * NDJSON on stdout, page by page as it is read, never the whole log in memory: unlike the
 * other commands, which print once the database is closed. A reader that stops (`| head`)
 * ends the process on EPIPE (admin.ts), and with it the reading.
 */
async function exportEvents(options: ExportOptions): Promise<void> {
  // Checked as the API checks it, before any connection is made.
  const input = auditFilterInput.parse({ since: options.since, until: options.until, account_id: options.account });
  await withServices(async (admin, deps) => {
    for await (const lines of await admin.exportAuditEvents(deps, CLI_ACTOR, input)) {
      await writeOut(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    }
  });
}

/** `audit export` (docs/OPERATIONS.md, Operator CLI): the activity log for auditors, as GET /api/v1/admin/audit gives it. */
export function addAuditCommands(program: Command): void {
  const audit = program.command('audit').description("the activity log of every account: export it for auditors");
  audit
    .command('export')
    .description(
      'every event of the activity log, oldest first, one JSON object a line on stdout ' +
        '({"id","at","account_id","event","ip","user_agent","data"}); the export is itself recorded (admin.audit_exported)',
    )
    .option('--since <time>', `only events at or after this time (${TIME_HELP})`)
    .option('--until <time>', 'only events before this time')
    .option('--account <id>', "only this account's events (its id)")
    // Every command takes --json; this one's output is JSON (a line an event) either way.
    .option('--json', 'accepted for scripts: the output is NDJSON with or without it')
    .action(exportEvents);
}
