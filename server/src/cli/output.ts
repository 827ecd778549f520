import { ZodError } from 'zod';
import { ConfigError } from '../config.ts';
import { zodIssues } from '../errors/errors.ts';
import { cliIo } from './io.ts';

/** What the process exits with; scripts branch on these, so they never change meaning. */
export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3 } as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0  done
  1  failure: the database cannot be reached, a configuration error, … or a change refused
     as it stands (demoting the last admin)
  2  usage error: unknown command or option, or a bad value (the option is named)
  3  not found: no account has the e-mail address, or no delivery or endpoint has the id`;

export const JSON_OPTION_HELP = 'print one JSON document on stdout, and nothing else there (for scripts)';

/** The operator asked for something that cannot be done as asked; nothing was touched. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** One document, so `… --json | jq` always has exactly one thing to read. */
export function printJson(value: unknown): void {
  cliIo().stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLine(text = ''): void {
  cliIo().stdout.write(`${text}\n`);
}

/** Columns padded to their widest cell; the last column is not padded, so lines end clean. */
export function printTable(headers: string[], rows: string[][]): void {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ');
  printLine(line(headers));
  for (const row of rows) printLine(line(row));
}

/** Fields the commands take as arguments rather than options. */
const ARGUMENT_FIELDS = new Set(['id', 'email', 'role']);

/** Fields an option gives under another name (`audit export --account` is the API's `account_id`). */
const OPTION_NAMES: Record<string, string> = { account_id: 'account', endpoint_id: 'endpoint', grace_seconds: 'grace' };

/**
 * Issues named as the operator typed them: `--since` and `<id>`, not the schema's `since` and
 * `id`; an item of a list (`events.1`) by the option that gave the whole list. A command that
 * gives a field under a name of its own has already named it so (`<url>`, `--endpoint`).
 */
function describeIssues(issues: Array<{ path: string; message: string }>): string {
  const named = (field: string) => (/^(<|--)/.test(field) ? field : ARGUMENT_FIELDS.has(field) ? `<${field}>` : `--${OPTION_NAMES[field] ?? field}`);
  return issues.map((issue) => `${named(issue.path.split('.')[0])}: ${issue.message}`).join('; ');
}

/**
 * Any failure as one line for a person and an exit code for a script. The service's own
 * error path (toErrorResponse) decides what kind of failure it is, so the CLI and the API
 * agree on what a bad value or a missing delivery is. Never a stack trace: the operator
 * needs to know what to fix, not where in the code it was found.
 */
export async function describeFailure(error: unknown, env: NodeJS.ProcessEnv = cliIo().env): Promise<{ exitCode: number; message: string }> {
  if (error instanceof UsageError) return { exitCode: EXIT.usage, message: error.message };
  if (error instanceof ConfigError) return { exitCode: EXIT.failure, message: `invalid configuration: ${error.problems.join('; ')}` };
  // A value refused by a command's schema, before anything loaded: told as the API tells it, without loading the service.
  if (error instanceof ZodError) return { exitCode: EXIT.usage, message: `invalid value: ${describeIssues(zodIssues(error))}` };
  // Loaded on a failure only: the error path pulls in tRPC and Sequelize (see session.ts).
  const { toErrorResponse, describeStartFailure, isStartFailure } = await import('../index.ts');
  // What would stop the service's start stops a command the same way, in the same words.
  if (isStartFailure(error)) return { exitCode: EXIT.failure, message: describeStartFailure(error, env) };
  const response = toErrorResponse(error);
  if (response.status === 404) return { exitCode: EXIT.notFound, message: response.body.message };
  // Refused as things stand, not for how it was asked (409: the last admin): the service's own words.
  if (response.status === 409) return { exitCode: EXIT.failure, message: response.body.message };
  if (response.status === 400) {
    const issues = response.body.issues;
    return { exitCode: EXIT.usage, message: issues?.length ? `invalid value: ${describeIssues(issues)}` : response.body.message };
  }
  return { exitCode: EXIT.failure, message: `unexpected failure: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}` };
}

export async function reportFailure(error: unknown): Promise<number> {
  const { exitCode, message } = await describeFailure(error);
  cliIo().stderr.write(`error: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  return exitCode;
}
