import { Option, type Command } from 'commander';
import type { SigningAlgorithm } from '../index.ts';
import { cliIo } from './io.ts';
import { JSON_OPTION_HELP, printJson, printLine } from './output.ts';

const ALGORITHMS = ['EdDSA', 'ES256'] as const satisfies readonly SigningAlgorithm[];

/** What to do with a new key: the rotation of docs/DEPLOY.md, Rotating secrets, in short. */
const ROTATION = [
  'To start signing with it, without a failed check anywhere:',
  '  1. list it second in ACCESS_TOKEN_KEYS (after the key that signs now) on every instance: it is published, not used;',
  '  2. after at least 5 minutes (the JWKS max-age), move it first: it signs;',
  '  3. after ACCESS_TOKEN_TTL more, remove the old key.',
  'A first key (no ACCESS_TOKEN_KEYS yet) can be set alone at once.',
];

/**
 * The key alone on stdout, so that `$(npm run admin -- tokens keygen)` holds nothing else; what
 * it is and what to do with it on stderr. It is made here and printed once: nothing keeps it.
 */
async function keygen(options: { alg: SigningAlgorithm; json?: boolean }): Promise<void> {
  const { newSigningKey } = await import('../index.ts');
  const { privateJwk, kid } = await newSigningKey(options.alg);
  if (options.json) return printJson({ success: true, alg: options.alg, kid, private_jwk: privateJwk });
  printLine(JSON.stringify(privateJwk));
  const { stderr } = cliIo();
  const note = [`This is a new ${options.alg} PRIVATE key (kid ${kid}): keep it as secret as JWT_SECRET, never in a repository or a log.`, ...ROTATION];
  stderr.write(`${note.join('\n')}\n`);
}

/** `tokens keygen` (docs/OPERATIONS.md, Operator CLI): a signing key for ACCESS_TOKEN_KEYS. */
export function addTokensCommands(program: Command): void {
  const tokens = program.command('tokens').description("access tokens for the platform's services: their signing keys");
  tokens
    .command('keygen')
    .description(
      'print a new private key for ACCESS_TOKEN_KEYS, as a JWK on one line (stdout), and how to rotate it in (stderr). ' +
        'Needs no database and changes nothing: the key is in the output only.',
    )
    .addOption(new Option('--alg <alg>', 'the key type: EdDSA (Ed25519) or ES256 (P-256)').choices(ALGORITHMS).default('EdDSA'))
    .option('--json', JSON_OPTION_HELP)
    .action(keygen);
}
