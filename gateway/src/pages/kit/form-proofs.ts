import type { inferRouterInputs } from '@trpc/server';
import { AppError, type AppRouter } from '../../../../server/src/index.ts';
import type { FormFields } from './form-body.ts';

type AuthInputs = inferRouterInputs<AppRouter>['auth'];
/** A passkey's answer to sign-in options, as the procedures take it. */
export type PasskeyAssertion = AuthInputs['loginPasskey']['response'];
/** A new passkey, as the browser made it for creation options. */
export type PasskeyAttestation = AuthInputs['addPasskey']['response'];

/**
 * The WebAuthn answer the passkey script put in a form's hidden field, as JSON; undefined when
 * the field is empty. Typed as the procedure it goes to takes it: that procedure's schema
 * checks every part of it. A field that is not JSON is a 400, never passed on.
 */
export function passkeyAnswer<T extends PasskeyAssertion | PasskeyAttestation>(form: FormFields, name = 'response'): T | undefined {
  const text = form.text(name);
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: name, message: 'is not a passkey answer this page can read' }] });
  }
}

/**
 * The proof of the second factor a form carries for a sensitive change: its code, or a
 * passkey's answer; an empty field is left out, so that a session that proved it a moment
 * ago needs neither.
 */
export function stepUpProof(form: FormFields): { code?: string; response?: PasskeyAssertion } {
  const code = form.text('code');
  const response = passkeyAnswer<PasskeyAssertion>(form);
  return { ...(code.trim() === '' ? {} : { code }), ...(response === undefined ? {} : { response }) };
}

/**
 * The current password as typed, or absent when its field was left empty or not shown: an
 * account without a password has none to give (the procedure then weighs its sign-in).
 */
export function currentPassword(form: FormFields, field = 'password'): string | undefined {
  const value = form.text(field);
  return value === '' ? undefined : value;
}
