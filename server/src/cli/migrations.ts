import type { Command } from 'commander';
import { JSON_OPTION_HELP, printJson, printLine, printTable } from './output.ts';
import { withDatabase } from './session.ts';

/** `unknown`: recorded in the database but not in this build (a newer version applied it). */
type MigrationStatus = { name: string; state: 'applied' | 'pending' | 'unknown'; applied_at: string | null };

async function statusOf(applied: Map<string, Date>): Promise<MigrationStatus[]> {
  // Loaded on use, like the database (session.ts): --help need not load every migration.
  const { MIGRATIONS } = await import('../index.ts');
  const known = MIGRATIONS.map(({ name }): MigrationStatus => {
    const at = applied.get(name);
    return { name, state: at ? 'applied' : 'pending', applied_at: at?.toISOString() ?? null };
  });
  const names = new Set(MIGRATIONS.map(({ name }) => name));
  const unknown = [...applied].filter(([name]) => !names.has(name)).map(([name, at]): MigrationStatus => ({ name, state: 'unknown', applied_at: at.toISOString() }));
  return [...known, ...unknown];
}

async function status(options: { json?: boolean }): Promise<void> {
  // Only reads: openDeps would apply pending migrations, which is what this command reports on.
  const { appliedMigrations } = await import('../index.ts');
  const migrations = await statusOf(await withDatabase(appliedMigrations));
  const pending = migrations.filter((migration) => migration.state === 'pending').length;
  if (options.json) return printJson({ success: true, migrations, pending });
  printTable(['migration', 'state', 'applied at'], migrations.map((m) => [m.name, m.state, m.applied_at ?? '-']));
  printLine(pending ? `\n${pending} pending: npm run migrate applies them (so does starting the service).` : '\nEvery migration is applied.');
}

/** `migrate status`: what `npm run migrate` would do, without doing it. */
export function addMigrateCommands(program: Command): void {
  const migrate = program.command('migrate').description('the database schema (npm run migrate applies pending migrations)');
  migrate
    .command('status')
    .description('every migration of this version, applied (and when) or pending; changes nothing')
    .option('--json', JSON_OPTION_HELP)
    .action(status);
}
