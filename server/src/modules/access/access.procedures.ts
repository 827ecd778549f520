import { z } from 'zod';
import { AppError } from '../../errors/errors.ts';
import { guardedProcedure, refuseCrossSiteCookieWrite } from '../../trpc/procedures.ts';
import { passwordHashOf } from '../accounts/index.ts';
import { refuseUntilMfaSetUp } from '../mfa/index.ts';
import { authenticate, type AuthContext } from '../sessions/index.ts';

/**
 * Who may call a procedure that needs an account: the credentials name a live session or an
 * API key (sessions), a mutation by the session cookie alone comes from a trusted site as
 * JSON, and an account whose role must have a second factor has one, unless the procedure is
 * one that sets it up (`beforeMfaSetup`). The account goes into the request's facts for the
 * gateway's access log.
 */
export const authedProcedure = guardedProcedure<AuthContext>(async (ctx, { type, meta }) => {
  const auth = await authenticate(ctx.deps, ctx.credentials);
  if (!auth) throw new AppError('UNAUTHORIZED');
  refuseCrossSiteCookieWrite(ctx, type);
  if (!meta?.beforeMfaSetup) await refuseUntilMfaSetUp(ctx.deps, auth.account);
  ctx.request.accountId = auth.account.id;
  return auth;
});

/** For operators: an authenticated account with role admin; anyone else gets 403 FORBIDDEN. */
export const adminProcedure = authedProcedure
  .use(({ ctx, next }) => {
    if (ctx.auth.account.role !== 'admin') throw new AppError('FORBIDDEN', 'Only administrators may do this.');
    return next();
  })
  .meta({ adminOnly: true });

/**
 * An authenticated procedure whose input asks for the current password in `field`, left
 * optional in `schema` because an account made through an identity provider has none to
 * give (passwords.check.ts says what stands in for it). An account that has a password must
 * still give it, and a body without it is refused as the schema with the field required
 * refuses it: 400 VALIDATION_FAILED naming every faulty field at once, the password among them.
 * The field is named in the meta, so that the OpenAPI document shows it as required, with a
 * note for the accounts without a password, and the route's errors include a password's.
 */
export function passwordConfirmingProcedure<S extends z.ZodObject>(schema: S, field = 'password') {
  const optional = schema.shape[field];
  const required = schema.extend({ [field]: optional instanceof z.ZodOptional ? optional.unwrap() : optional });
  return authedProcedure
    .meta({ passwordField: field })
    .use(async ({ ctx, next, getRawInput }) => {
      const raw = await getRawInput();
      const leftOut = typeof raw === 'object' && raw !== null && (raw as Record<string, unknown>)[field] === undefined;
      if (leftOut && (await passwordHashOf(ctx.deps.db, ctx.auth.account.id)) !== null) required.parse(raw);
      return next();
    })
    .input(schema);
}
