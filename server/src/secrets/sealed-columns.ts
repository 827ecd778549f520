/**
 * Every column that holds a sealed value (AES-GCM under DATA_KEY, lib/crypto.ts). A value is
 * bound to its place, `<table>.<column>` and the row's key: the modules that write them name
 * the same places (keys.storage.ts apiKeyPlace, sites.service.ts, channels.service.ts),
 * and tests/secrets.rotation.rest.test.ts seals through the modules and re-encrypts through
 * this list, so the two cannot drift apart unnoticed. A new sealed column goes here.
 */
export type SealedColumn = { table: string; key: string; column: string };

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'accounts', key: 'id', column: 'api_key_sealed' },
  { table: 'sites', key: 'site_key', column: 'secret_sealed' },
  { table: 'channels', key: 'id', column: 'bot_token_sealed' },
  { table: 'channels', key: 'id', column: 'secret_sealed' },
];

export const placeOf = (sealed: SealedColumn, row: string | number) => ({ column: `${sealed.table}.${sealed.column}`, row });
