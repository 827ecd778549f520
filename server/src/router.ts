import { adminRouter } from './admin/admin.router.ts';
import type { RateRule } from './lib/rate-limiter.ts';
import { ACCOUNT_RATE_RULES } from './modules/accounts/index.ts';
import { accountsProcedures as accounts } from './modules/accounts/accounts.router.ts';
import { activityProcedures } from './modules/activity/activity.router.ts';
import { channelsRouter } from './modules/channels/channels.router.ts';
import { identitiesProcedures } from './modules/identities/identities.router.ts';
import { keysProcedures } from './modules/keys/keys.router.ts';
import { mfaProcedures } from './modules/mfa/mfa.router.ts';
import { notificationsRouter } from './modules/notifications/notifications.router.ts';
import { PASSWORD_RATE_RULES } from './modules/passwords/index.ts';
import { passwordsProcedures } from './modules/passwords/passwords.router.ts';
import { SESSION_RATE_RULES } from './modules/sessions/index.ts';
import { sessionsProcedures as sessions } from './modules/sessions/sessions.router.ts';
import { sitesRouter } from './modules/sites/sites.router.ts';
import { tokensProcedures as tokens } from './modules/tokens/tokens.router.ts';
import { createCallerFactory, router } from './trpc/procedures.ts';

type AuthProcedureName = keyof (typeof accounts & typeof sessions & typeof passwordsProcedures & typeof keysProcedures & typeof activityProcedures & typeof mfaProcedures & typeof identitiesProcedures & typeof tokens);

/**
 * auth.*: account access, from the modules accounts, sessions, passwords, keys, activity, mfa,
 * identities and tokens. Named one by one where modules take turns, because the order is the API reference's:
 * the OpenAPI document's paths and docs/API.md list the procedures as they come here.
 */
const authProcedures = {
  register: accounts.register,
  verifyEmail: accounts.verifyEmail,
  resendVerification: accounts.resendVerification,
  login: sessions.login,
  loginMfa: sessions.loginMfa,
  passkeyLoginOptions: sessions.passkeyLoginOptions,
  loginPasskey: sessions.loginPasskey,
  me: accounts.me,
  logout: sessions.logout,
  accessToken: tokens.accessToken,
  ...passwordsProcedures,
  ...keysProcedures,
  listSessions: sessions.listSessions,
  revokeSession: sessions.revokeSession,
  revokeAllSessions: sessions.revokeAllSessions,
  changeEmail: accounts.changeEmail,
  pendingEmailChange: accounts.pendingEmailChange,
  cancelEmailChange: accounts.cancelEmailChange,
  confirmEmailChange: accounts.confirmEmailChange,
  deleteAccount: accounts.deleteAccount,
  updateProfile: accounts.updateProfile,
  ...activityProcedures,
  ...mfaProcedures,
  ...identitiesProcedures,
} satisfies Record<AuthProcedureName, unknown>;

export const appRouter = router({
  auth: router(authProcedures),
  sites: sitesRouter,
  channels: channelsRouter,
  notifications: notificationsRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;

/** The procedures called in process, as the typed client calls them over HTTP: `createCaller(ctx).auth.me()`. */
export const createCaller = createCallerFactory(appRouter);

/** The browser's half of a sign-in through an identity provider, for the gateway (identities.router.ts says why here). */
export { identityFlows } from './modules/identities/identities.router.ts';

/**
 * The rate rules of auth.*, each kept by its module, in one table for docs/API.md (which
 * lists them in this order).
 */
export const AUTH_RATE_RULES = {
  ...SESSION_RATE_RULES,
  registerPerIp: ACCOUNT_RATE_RULES.registerPerIp,
  registerPerAddress: ACCOUNT_RATE_RULES.registerPerAddress,
  resendPerIp: ACCOUNT_RATE_RULES.resendPerIp,
  resendPerAddress: ACCOUNT_RATE_RULES.resendPerAddress,
  forgotPerIp: PASSWORD_RATE_RULES.forgotPerIp,
  forgotPerAddress: PASSWORD_RATE_RULES.forgotPerAddress,
  tokenUsesPerIp: ACCOUNT_RATE_RULES.tokenUsesPerIp,
  passwordChecksPerCaller: PASSWORD_RATE_RULES.passwordChecksPerCaller,
  emailChangesPerAccount: ACCOUNT_RATE_RULES.emailChangesPerAccount,
} satisfies Record<keyof (typeof SESSION_RATE_RULES & typeof ACCOUNT_RATE_RULES & typeof PASSWORD_RATE_RULES), RateRule>;
