// The sessions module's face: who is calling (authenticate, AuthContext), ending an account's
// sessions, the failed-login rules that wrong passwords and codes elsewhere run down, and the
// end of a sign-in another module began (startSession, signedIn: identities/).
// Nothing here may import the second factor (mfa/ builds on this face): the sign-in that
// asks for it (sessions.login.ts) and the procedures (sessions.router.ts, merged into
// auth.* by server/src/router.ts) stay behind it. The /me cache and the touch writer are
// this module's own, kept per Deps (sessions.cache.ts, sessions.touches.ts): deps.ts brings
// only the LISTEN connection that keeps the cache honest, and imports no module.
export { authenticate } from './sessions.credentials.ts';
export { forgetCachedAccount } from './sessions.cache.ts';
export { sessionsTable } from './sessions.model.ts';
export { perAccountClient, SESSION_RATE_RULES } from './sessions.limits.ts';
export { sessionsRevokedByAdminNotice } from './sessions.mails.ts';
export { liveSessionsOf, revokeSessions, sessionSignIn, signOutEverywhere } from './sessions.service.ts';
export { deviceOf, signedIn, startSession, type LoginResult } from './sessions.issue.ts';
export type { AuthContext, SecondStep, SessionSignIn } from './sessions.types.ts';
