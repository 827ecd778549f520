import type { Migration } from './context.ts';

/**
 * sessions.second_step: the second factor a sign-in proved before its session began
 * (`totp`, `recovery_code` or `passkey`), null when it had none, beside `via`, how its first
 * step was made. An access token's `amr` says both. Sessions from before are taken to have
 * had none: their tokens say less than happened, never more.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql(`ALTER TABLE sessions ADD COLUMN second_step text CHECK (second_step IN ('totp', 'recovery_code', 'passkey'))`);
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql('ALTER TABLE sessions DROP COLUMN second_step');
};
