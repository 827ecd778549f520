import type { Command } from 'commander';
import { setExitCode } from './io.ts';
import { EXIT, JSON_OPTION_HELP, printJson, printLine } from './output.ts';
import { wantsProgressBar, withProgressBar } from './progress.ts';
import { CLI_ACTOR, withServices } from './session.ts';

async function reencrypt(options: { json?: boolean }): Promise<void> {
  const { countPendingSecrets } = await import('../index.ts');
  const report = await withServices((admin, deps) =>
    wantsProgressBar(options)
      ? withProgressBar('re-encrypting', () => countPendingSecrets(deps), (onProgress) => admin.reencryptSecrets(deps, CLI_ACTOR, onProgress))
      : admin.reencryptSecrets(deps, CLI_ACTOR),
  );
  // Some values no listed key opens: a script must not go on to drop the old key.
  if (!report.success) setExitCode(EXIT.failure);
  if (options.json) return printJson(report);
  printLine(`Re-encrypted ${report.reencrypted} stored secrets under the first DATA_KEY.`);
  if (report.unreadable) {
    printLine(`${report.unreadable} could not be opened with any listed DATA_KEY and were left as they were (the log names them); keep their key listed and run this again.`);
  } else {
    printLine('Every stored secret is now under the first DATA_KEY: older keys may be removed from DATA_KEY.');
  }
}

/** `secrets reencrypt` (docs/DEPLOY.md, Rotating secrets), the last step of a DATA_KEY rotation. */
export function addSecretsCommands(program: Command): void {
  const secrets = program.command('secrets').description('secrets stored in the database, sealed under DATA_KEY');
  secrets
    .command('reencrypt')
    .description(
      'rewrite every stored secret (API keys and their lookup hashes, site and channel secrets) under the first key of DATA_KEY; ' +
        'safe while the service runs, and to run again. Exits 1 if a value opens with no listed key.',
    )
    .option('--json', JSON_OPTION_HELP)
    .action(reencrypt);
}
