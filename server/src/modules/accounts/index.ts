// The accounts module's face: the account as the other modules see it, and what they need of
// its tables (accounts, email_tokens), so that no other module writes SQL on them. Nothing
// here may import deps.ts or the trpc/ context: sessions/ (which deps.ts builds on) names
// AccountRow. The procedures (accounts.router.ts) are merged into auth.* by server/src/router.ts.
export {
  accountByApiKeyHash,
  accountByPreviousApiKeyHash,
  accountForLogin,
  dropPreviousApiKeysUntil,
  passwordHashOf,
  replaceApiKey,
  setPasswordHash,
  setPasswordHashByMail,
} from './accounts.credentials.ts';
export { claimUnverifiedAccount, createProviderAccount, lockAccountByEmail, lockAccountPassword } from './accounts.from-provider.ts';
export { ACCOUNT_RATE_RULES } from './accounts.limits.ts';
export { ACCOUNT_COLUMNS, accountByEmail, accountById, toAccountSummary, toUser, userSchema, type AccountRow, type User } from './accounts.profile.ts';
export { issueToken, liveTokenOwner, TAKEOVER_LINKS, useToken, voidTokens } from './accounts.tokens.ts';
