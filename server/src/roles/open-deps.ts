import type { Config } from '../config.ts';
import { createDeps, type Deps, type DepsOverrides } from '../deps.ts';
import { checkDataKeys } from '../secrets/data-key-check.ts';

/**
 * What a process starts with (the service's roles, the CLI): every connection, made by
 * createDeps, once the configured DATA_KEY is known to open the secrets this database holds.
 * When none does, the start stops with a StartError naming DATA_KEY (one line, as every
 * failed start) and what was opened is closed again; nothing is served or changed. Here,
 * above deps.ts, because the check reads every owner's sealed columns (secrets/), and
 * re-encryption, beside it, takes the Deps it builds.
 */
export async function openDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const deps = await createDeps(config, overrides);
  try {
    await checkDataKeys(deps.db, deps.secretBox, deps.clock, deps.logger);
  } catch (error) {
    await deps.close().catch(() => undefined);
    throw error;
  }
  return deps;
}
