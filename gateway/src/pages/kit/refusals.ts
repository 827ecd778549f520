import type { Context as KoaContext } from 'koa';
import { toErrorResponse, type ErrorCode } from '../../../../server/src/index.ts';
import type { FormState, Notice } from './components.tsx';
import { fieldMessage, waitText } from './wording.ts';
import type { FormFields } from './form-body.ts';

/** A form shown again after a procedure refused it: with what status, which fields, what message. */
export type Refusal = { code: ErrorCode; status: number; form: FormState; notice?: Notice };

/** The form's fields and the labels its page shows them under. */
export type FieldLabels = Record<string, string>;

type Issue = { path: string; message: string };

/** Fields never written back into a page: passwords, and codes (a recovery code not spent is still good). */
const isSecretField = (name: string) => name.includes('password') || name === 'code';

function fieldErrors(issues: Issue[], form: FormFields, labels: FieldLabels): { errors: Record<string, string>; elsewhere: string[] } {
  const errors: Record<string, string> = {};
  const elsewhere: string[] = [];
  for (const issue of issues) {
    const label = labels[issue.path];
    if (label) errors[issue.path] ??= fieldMessage(label, issue.message, form.text(issue.path));
    else elsewhere.push(issue.message);
  }
  return { errors, elsewhere };
}

function validationRefusal(issues: Issue[], form: FormFields, labels: FieldLabels): Pick<Refusal, 'form' | 'notice'> {
  const { errors, elsewhere } = fieldErrors(issues, form, labels);
  const text = elsewhere.length || !Object.keys(errors).length ? 'Part of the form could not be used. Check it and send it again.' : 'Please correct the marked fields.';
  return { form: { errors }, notice: { tone: 'error', text } };
}

/** What a form asking for a proof of the second factor says when it lacks one, or the one given is wrong. */
export const PROOF_TEXTS = {
  STEP_UP_REQUIRED: 'Enter a code from your authenticator app or a recovery code to confirm.',
  INVALID_CODE: 'That code is wrong, already used or expired, or the passkey could not be used. Nothing was changed.',
} as const;

/**
 * A procedure's refusal as its form shows it: validation issues under the fields they name,
 * a rate limit with how long to wait (and `Retry-After`), the codes in `texts` as a message
 * (a wrong code also under its field). The values typed come back, passwords and codes never.
 * Anything else (an outage, a bug) is thrown on, to the problem page. Pages branch on the
 * error code only, never on its wording.
 */
export function formRefusal(ctx: KoaContext, error: unknown, form: FormFields, labels: FieldLabels, texts: Partial<Record<ErrorCode, string>> = {}): Refusal {
  const { code, status, headers, body } = toErrorResponse(error);
  const values = Object.fromEntries(
    Object.keys(labels)
      .filter((name) => !isSecretField(name))
      .map((name) => [name, form.text(name)]),
  );
  if (code === 'VALIDATION_FAILED') {
    const { form: state, notice } = validationRefusal(body.issues ?? [], form, labels);
    return { code, status, form: { ...state, values }, notice };
  }
  if (code === 'RATE_LIMITED') {
    const wait = Number(headers['retry-after']) || 60;
    ctx.set('Retry-After', String(wait));
    return { code, status, form: { values }, notice: { tone: 'error', title: 'Too many attempts', text: `Please wait ${waitText(wait)} and try again.` } };
  }
  const text = texts[code];
  if (text === undefined) throw error;
  const errors = code === 'INVALID_CODE' ? fieldErrors(body.issues ?? [], form, labels).errors : undefined;
  return { code, status, form: { values, errors }, notice: { tone: 'error', text } };
}

/** Whether `error` is a procedure's refusal with this error code. */
export function isRefusal(error: unknown, code: ErrorCode): boolean {
  return toErrorResponse(error).code === code;
}
