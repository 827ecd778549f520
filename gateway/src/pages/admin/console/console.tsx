import type Router from '@koa/router';
import type { inferRouterOutputs } from '@trpc/server';
import type { Context as KoaContext } from 'koa';
import { safeNextPath, toErrorResponse, type AppRouter } from '../../../../../server/src/index.ts';
import type { FormFields } from '../../kit/form-body.ts';
import type { PageKit } from '../../kit/kit.tsx';
import { isRefusal, PROOF_TEXTS } from '../../kit/refusals.ts';
import { fieldMessage } from '../../kit/wording.ts';
import { ConfirmPage, ConsoleProblemPage, MfaFirstPage, NotAdminPage, sectionOf, type Confirmation } from './console.view.tsx';

export type AdminOutputs = inferRouterOutputs<AppRouter>['admin'];
type StepUpState = inferRouterOutputs<AppRouter>['auth']['stepUpStatus'];

/** The admin looking at a console page: who (for the top bar), the forms' CSRF token, and whether the next change needs a code. */
export type Operator = {
  email: string;
  csrf: string;
  /** The admin has a second factor and the session's five minutes of step-up are over: each form asks for a code. */
  needsCode: boolean;
  /** Only a recovery code can be typed: the admin's second factor is passkeys without an app. */
  recoveryOnly: boolean;
};

export type ConsolePageHandler = (ctx: KoaContext, operator: Operator) => Promise<void> | void;
/** An action: what it does once the admin is known and the step-up is settled; it answers (a redirect or a page) itself. */
export type ConsoleActionHandler = (ctx: KoaContext, form: FormFields, operator: Operator) => Promise<void> | void;

/** Messages under a list's filter fields, by field name. */
export type FilterErrors = Record<string, string>;

/**
 * A list procedure's refusal of the filters in the query, as messages under those fields
 * (the list then shows empty, with a 400); undefined for any other failure, or one about a
 * field the page does not show (the cursor), which is the console's problem page instead.
 */
export function filterErrors(error: unknown, labels: Record<string, string>): FilterErrors | undefined {
  const { code, body } = toErrorResponse(error);
  const issues = body.issues ?? [];
  if (code !== 'VALIDATION_FAILED' || !issues.length || !issues.every((issue) => Object.hasOwn(labels, issue.path))) return undefined;
  // Zod's own messages start with a capital ("Invalid ISO datetime"), ours do not ("must not be after until").
  const sentence = (label: string, message: string) => `${label}: ${message.charAt(0).toLowerCase()}${message.slice(1)}${/[.!?]$/.test(message) ? '' : '.'}`;
  return Object.fromEntries(issues.map((issue) => [issue.path, sentence(labels[issue.path], issue.message)]));
}

/** What a list says when its filters were refused. */
export const FILTER_REFUSED = { tone: 'error', text: 'A filter could not be used: see the marked field.' } as const;

/** An action's own description, for the page that asks for the code when its form did not carry one. */
type ActionOptions = { confirm: (ctx: KoaContext, form: FormFields) => Omit<Confirmation, 'fields' | 'action'> };

/** The form fields an action's confirmation carries again: everything but the token (made anew) and the code (asked for). */
function carriedFields(form: FormFields, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.filter((name) => form.has(name)).map((name) => [name, form.text(name)]));
}

/**
 * The console's access rules (docs/API.md, Pages): signed out, to the sign-in page and back; a
 * signed-in account that is not an admin, a 403 page; an admin whose role needs a second
 * factor not set up yet, only the prompt to set one up (the admin procedures refuse it with
 * MFA_SETUP_REQUIRED until then). Every page and action reaches the data through the
 * procedures, with the session cookie, as every other page does.
 */
export function createConsole(router: Router, kit: PageKit) {
  async function operatorOf(ctx: KoaContext): Promise<Operator | undefined> {
    const caller = kit.call(ctx);
    let me;
    let stepUp: StepUpState;
    try {
      [me, stepUp] = await Promise.all([caller.auth.me(), caller.auth.stepUpStatus()]);
    } catch (error) {
      if (isRefusal(error, 'UNAUTHORIZED')) {
        kit.clearSession(ctx);
        kit.redirect(ctx, `/login?next=${ctx.method === 'GET' ? ctx.path : '/admin'}`);
        return undefined;
      }
      if (isRefusal(error, 'MFA_SETUP_REQUIRED')) {
        kit.send(ctx, 403, <MfaFirstPage viewer={{ email: '', csrf: kit.csrf(ctx) }} />);
        return undefined;
      }
      throw error;
    }
    const csrf = kit.csrf(ctx);
    if (me.user.role !== 'admin') {
      kit.send(ctx, 403, <NotAdminPage viewer={{ email: me.user.email, csrf }} />);
      return undefined;
    }
    return {
      email: me.user.email,
      csrf,
      needsCode: stepUp.required && stepUp.stepped_up_until === null,
      recoveryOnly: !stepUp.methods.includes('totp'),
    };
  }

  /** The answers every console page shares: a procedure's refusal of the whole page. */
  function refusedWhole(ctx: KoaContext, operator: Operator, error: unknown): boolean {
    if (isRefusal(error, 'MFA_SETUP_REQUIRED')) {
      kit.send(ctx, 403, <MfaFirstPage viewer={operator} />);
      return true;
    }
    if (isRefusal(error, 'FORBIDDEN')) {
      kit.send(ctx, 403, <NotAdminPage viewer={operator} />);
      return true;
    }
    if (isRefusal(error, 'UNAUTHORIZED')) {
      kit.clearSession(ctx);
      kit.redirect(ctx, '/login?next=/admin');
      return true;
    }
    // A filter, id or field the procedure could not use: said on a console page, with the way back to its list.
    const { code, status, body } = toErrorResponse(error);
    if (code === 'VALIDATION_FAILED' || code === 'NOT_FOUND') {
      const issues = (body.issues ?? []).map((issue) => `${issue.path || 'input'}: ${issue.message}`);
      kit.send(ctx, status, <ConsoleProblemPage operator={operator} code={code} issues={issues} back={sectionOf(ctx.path)} />);
      return true;
    }
    return false;
  }

  /**
   * The step-up of the console (docs/API.md, Pages): an admin with a second factor gives a code
   * with a change once the session's five minutes are over. A code in the form steps the
   * session up first (auth.stepUp); a wrong one, or none when one is needed, shows the
   * confirmation page with the field and its error, the form's other fields carried over.
   * Answers whether the action may go on.
   */
  async function steppedUp(ctx: KoaContext, form: FormFields, operator: Operator, confirmation: Omit<Confirmation, 'fields' | 'action'>, fieldNames: readonly string[]): Promise<boolean> {
    const code = form.text('code').trim();
    const again = (status: number, error?: string) =>
      kit.send(
        ctx,
        status,
        <ConfirmPage
          viewer={operator}
          operator={{ ...operator, needsCode: true }}
          confirmation={{ ...confirmation, action: ctx.path, fields: carriedFields(form, fieldNames) }}
          codeError={error}
        />,
      );
    if (code === '') {
      if (!operator.needsCode) return true;
      again(403, operator.recoveryOnly ? 'Enter a recovery code to confirm this change.' : PROOF_TEXTS.STEP_UP_REQUIRED);
      return false;
    }
    try {
      await kit.call(ctx).auth.stepUp({ code });
      return true;
    } catch (error) {
      if (isRefusal(error, 'INVALID_CODE')) {
        again(400, PROOF_TEXTS.INVALID_CODE);
        return false;
      }
      if (isRefusal(error, 'VALIDATION_FAILED')) {
        again(400, fieldMessage('The code', 'is not a code from an authenticator app or a recovery code', code));
        return false;
      }
      // An admin without a second factor who typed a code anyway: there is nothing to prove.
      if (isRefusal(error, 'CONFLICT')) return true;
      throw error;
    }
  }

  /**
   * POST /admin/step-up: the code given once, up front, for the changes of the next five
   * minutes (auth.stepUp), then back to the console page it was given on. A wrong code is
   * said under the field, on a page of its own.
   */
  kit.post(router, '/admin/step-up', async (ctx, form) => {
    const operator = await operatorOf(ctx);
    if (!operator) return;
    const next = safeNextPath(form.text('back'));
    const back = next && (next === '/admin' || next.startsWith('/admin/') || next.startsWith('/admin?')) ? next : '/admin';
    const confirmation = { title: 'Confirm it is you', text: 'Give a code of your second factor: it covers every change for 5 minutes.', button: 'Confirm', back: { href: back, label: 'Back' } };
    try {
      if (await steppedUp(ctx, form, operator, confirmation, ['back'])) kit.redirect(ctx, back);
    } catch (error) {
      if (!refusedWhole(ctx, operator, error)) throw error;
    }
  });

  return {
    /** A GET page of the console. */
    page(router: Router, path: string, handler: ConsolePageHandler) {
      kit.get(router, path, async (ctx) => {
        const operator = await operatorOf(ctx);
        if (!operator) return;
        try {
          await handler(ctx, operator);
        } catch (error) {
          if (!refusedWhole(ctx, operator, error)) throw error;
        }
      });
    },
    /**
     * A POST action of the console: CSRF and origin checked by the kit, then the admin, then
     * the step-up, then the action. `fields` are the form's own fields, carried to the
     * confirmation page if it must ask for a code.
     */
    action(router: Router, path: string, fields: readonly string[], options: ActionOptions, handler: ConsoleActionHandler) {
      kit.post(router, path, async (ctx, form) => {
        const operator = await operatorOf(ctx);
        if (!operator) return;
        try {
          if (!(await steppedUp(ctx, form, operator, options.confirm(ctx, form), fields))) return;
          await handler(ctx, form, { ...operator, needsCode: false });
        } catch (error) {
          if (!refusedWhole(ctx, operator, error)) throw error;
        }
      });
    },
  };
}

export type Console = ReturnType<typeof createConsole>;
