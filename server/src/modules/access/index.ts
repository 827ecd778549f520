// The access module's face: the procedures that need an account, and who they admit
// (access.procedures.ts). It owns no table; it joins the sessions (who is calling), accounts
// (whether a password stands) and mfa (whether the role's second factor is set up) faces, so
// that tRPC's plumbing (trpc/) imports no module. Only routers and admin/ import it.
export { adminProcedure, authedProcedure, passwordConfirmingProcedure } from './access.procedures.ts';
