import type { Context as KoaContext } from 'koa';
import { toErrorResponse } from '../../../../server/src/error-response.ts';
import type { ErrorCode } from '../../../../server/src/errors.ts';
import type { FormState, Notice } from '../../pages/components.tsx';
import { fieldMessage, waitText } from '../../pages/wording.ts';
import type { FormFields } from './form-body.ts';

/** A form shown again after a procedure refused it: with what status, which fields, what message. */
export type Refusal = { code: ErrorCode; status: number; form: FormState; notice?: Notice };

/** The form's fields and the labels its page shows them under. */
export type FieldLabels = Record<string, string>;

function validationRefusal(issues: Array<{ path: string; message: string }>, form: FormFields, labels: FieldLabels): Pick<Refusal, 'form' | 'notice'> {
  const errors: Record<string, string> = {};
  const elsewhere: string[] = [];
  for (const issue of issues) {
    const label = labels[issue.path];
    if (label) errors[issue.path] ??= fieldMessage(label, issue.message, form.text(issue.path));
    else elsewhere.push(issue.message);
  }
  const text = elsewhere.length || !Object.keys(errors).length ? 'Part of the form could not be used. Check it and send it again.' : 'Please correct the marked fields.';
  return { form: { errors }, notice: { tone: 'error', text } };
}

/**
 * A procedure's refusal as its form shows it: validation issues under the fields they name,
 * a rate limit with how long to wait (and `Retry-After`), the codes in `texts` as a message.
 * The values typed come back, passwords never. Anything else (an outage, a bug) is thrown
 * on, to the problem page. Pages branch on the error code only, never on its wording.
 */
export function formRefusal(ctx: KoaContext, error: unknown, form: FormFields, labels: FieldLabels, texts: Partial<Record<ErrorCode, string>> = {}): Refusal {
  const { code, status, headers, body } = toErrorResponse(error);
  const values = Object.fromEntries(
    Object.keys(labels)
      .filter((name) => !name.includes('password'))
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
  return { code, status, form: { values }, notice: { tone: 'error', text } };
}

/** Whether `error` is a procedure's refusal with this error code. */
export function isRefusal(error: unknown, code: ErrorCode): boolean {
  return toErrorResponse(error).code === code;
}
