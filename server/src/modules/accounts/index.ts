// The accounts module's face: the account as the other modules see it, and what they need of
// its tables (accounts, email_tokens: accounts.model.ts, every statement in accounts.repo.ts),
// so that no other module writes SQL on them. Nothing here may import deps.ts or the trpc/
// context: sessions/ (which deps.ts builds on) names AccountRow. The procedures
// (accounts.router.ts) are merged into auth.* by server/src/router.ts.
export { claimUnverifiedAccount, createProviderAccount } from './accounts.from-provider.ts';
export { emitAccountEvent } from './accounts.events.ts';
export { ACCOUNT_RATE_RULES } from './accounts.limits.ts';
export { accountCountsTable, accountsTable, adminEmailPromotionsTable, emailTokensTable, type AccountRow } from './accounts.model.ts';
export { toAccountSummary, toUser, userSchema, type User } from './accounts.user.ts';
export {
  accountByApiKeyHash,
  accountCounts,
  accountByEmail,
  accountById,
  adminAddresses,
  changeRole,
  accountByPreviousApiKeyHash,
  accountForLogin,
  apiKeyPlace,
  accountRowByEmail,
  dropPreviousApiKeysUntil,
  lockAccount,
  lockAccountPassword,
  lockPasswordIfStill,
  lockAccounts,
  lockAdmins,
  lockAccountRowByEmail,
  passwordHashOf,
  replaceApiKey,
  searchAccountRows,
  setPasswordHash,
  setPasswordHashByMail,
  setPlan,
  type LockedAccount,
} from './accounts.repo.ts';
export { issueToken, liveTokenOwner, TAKEOVER_LINKS, useToken, voidTokens } from './accounts.tokens.ts';
export { verificationMailFor } from './accounts.verification.ts';
