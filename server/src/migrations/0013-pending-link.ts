import type { Migration } from './context.ts';

/**
 * mfa_challenges.pending_link: a sign-in through an identity provider that joins an existing
 * account with a second factor links the provider only once the second step passes. Until
 * then the provider's identity waits with the sign-in's `mfa_token` (a sign-in abandoned at
 * its second step links nothing), and goes with it when the token expires.
 */
export const up: Migration = async ({ context: { sql } }) => {
  await sql('ALTER TABLE mfa_challenges ADD COLUMN pending_link jsonb');
};

export const down: Migration = async ({ context: { sql } }) => {
  await sql('ALTER TABLE mfa_challenges DROP COLUMN pending_link');
};
