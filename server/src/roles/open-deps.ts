import type { Config } from '../config.ts';
import { createDeps, type Deps, type DepsOverrides } from '../deps.ts';
import { checkDataKeys } from '../secrets/data-key-check.ts';

/**
 * What a process starts with (the service's roles, the CLI): every connection, made by
 * createDeps, once the configured DATA_KEY is known to open the secrets this database holds.
 * When none does, the start stops with a StartError naming DATA_KEY (one line, as every
 * failed start) before the queue, the mailer or a listener starts. Here, above deps.ts,
 * because the check reads every owner's sealed columns (secrets/), and re-encryption, beside
 * it, takes the Deps that createDeps builds.
 */
export function openDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  return createDeps(config, { ...overrides, checkOpened: ({ db, secretBox, clock, logger }) => checkDataKeys(db, secretBox, clock, logger) });
}
