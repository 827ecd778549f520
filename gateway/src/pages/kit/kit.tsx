import type Router from '@koa/router';
import { TRPCError } from '@trpc/server';
import type { Context as KoaContext, Next } from 'koa';
import type { VNode } from 'preact';
import { AppError, createCaller, SESSION_COOKIE, toErrorResponse, type BrowserWrite, type Context, type Deps, type Logger } from '../../../../server/src/index.ts';
import { CSRF_FIELD, csrfToken, csrfTokenMatches, isVisitorId, newVisitorId, VISITOR_COOKIE } from './csrf.ts';
import { ProblemPage, type Problem } from './problem.view.tsx';
import { problemFor, refusedFormProblem } from './problems.ts';
import { loadsScript, renderDocument } from './render.ts';
import { clearedCookieHeader, cookieHeader, hostCookieName, procedureContextOf, readCookie, requestInfoOf, takeSessionCookies } from '../../procedure-context.ts';
import { readFormBody, type FormFields } from './form-body.ts';

const PAGE_POLICY = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/**
 * A page with passkey buttons loads their script and the WebAuthn library, both files of this
 * site (never inline), and the script asks this site for sign-in options. Every other page
 * runs no script at all.
 */
const SCRIPTED_PAGE_POLICY = `${PAGE_POLICY}; script-src 'self'; connect-src 'self'`;

const PAGE_HEADERS = {
  'Content-Security-Policy': PAGE_POLICY,
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // Pages show tokens (in links and forms) and the API key; none of it belongs in a cache.
  'Cache-Control': 'no-store',
};

/**
 * How a page tells a procedure that it checked the browser's write itself. authedProcedure
 * refuses a cookie-authenticated mutation that is cross-site or not JSON (no HTML form can
 * send JSON, which is what makes the JSON rule a CSRF defence for the API). A page form is
 * never JSON; its defence is the CSRF token and the Origin check of `acceptForm`, and only
 * once both passed does the request say so. Until then a page's POST carries the facts as
 * they are, so a handler mounted without the check is refused by the procedure (415).
 */
const CHECKED_BY_PAGE: BrowserWrite = { crossSite: false, json: true };

type PageState = { pageContext?: Context; visitorId?: string; sessionCleared?: boolean; logger?: Logger };

export type PageKit = ReturnType<typeof createPageKit>;

/** A query parameter given once, as text; undefined when absent or repeated. */
export const queryText = (ctx: KoaContext, name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : undefined);
export type PageHandler = (ctx: KoaContext) => Promise<void> | void;
export type FormHandler = (ctx: KoaContext, form: FormFields) => Promise<void> | void;

export function createPageKit(deps: Deps) {
  const state = (ctx: KoaContext) => ctx.state as PageState;
  const visitorCookie = hostCookieName(deps.config, VISITOR_COOKIE);

  /**
   * This request's procedure context: the cookies as credentials (pages use the session
   * cookie only) and the request as procedure-context.ts saw it. What procedures ask to set (the
   * session cookie of a sign-in) is sent with the page or the redirect.
   */
  function context(ctx: KoaContext): Context {
    const page = state(ctx);
    page.pageContext ??= procedureContextOf(deps, ctx, { cookie: ctx.get('cookie') });
    return page.pageContext;
  }

  /** The procedures, as REST and tRPC call them, for this request. */
  function call(ctx: KoaContext) {
    return createCaller(context(ctx));
  }

  /** The session cookie as the browser will hold it after this answer. */
  function sessionCookie(ctx: KoaContext): string | undefined {
    return state(ctx).sessionCleared ? undefined : readCookie(ctx.get('cookie'), SESSION_COOKIE);
  }

  /** The CSRF token for this page's forms; gives the browser a visitor id first if it has none. */
  function csrf(ctx: KoaContext): string {
    const page = state(ctx);
    if (!page.visitorId) {
      const presented = readCookie(ctx.get('cookie'), visitorCookie);
      page.visitorId = isVisitorId(presented) ? presented : newVisitorId();
      if (page.visitorId !== presented) ctx.append('Set-Cookie', cookieHeader(deps.config, visitorCookie, page.visitorId));
    }
    return csrfToken(deps.formKey, page.visitorId, sessionCookie(ctx));
  }

  /** The session cookies the procedures asked for, once. */
  function applyProcedureHeaders(ctx: KoaContext): void {
    const response = state(ctx).pageContext?.response;
    for (const cookie of response ? takeSessionCookies(deps.config, response) : []) ctx.append('Set-Cookie', cookie);
  }

  function send(ctx: KoaContext, status: number, page: VNode): void {
    applyProcedureHeaders(ctx);
    const html = renderDocument(page);
    ctx.set(PAGE_HEADERS);
    if (loadsScript(html)) ctx.set('Content-Security-Policy', SCRIPTED_PAGE_POLICY);
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = html;
  }

  /** 303: after a POST, the browser GETs the new location. */
  function redirect(ctx: KoaContext, location: string): void {
    applyProcedureHeaders(ctx);
    ctx.set(PAGE_HEADERS);
    ctx.set('Location', location);
    ctx.status = 303;
  }

  function clearSession(ctx: KoaContext): void {
    if (!readCookie(ctx.get('cookie'), SESSION_COOKIE)) return;
    ctx.append('Set-Cookie', clearedCookieHeader(deps.config, SESSION_COOKIE));
    state(ctx).sessionCleared = true;
  }

  function sendProblem(ctx: KoaContext, status: number, problem: Problem): void {
    // An early answer leaves the body unread: close rather than let the rest stall the connection.
    if (!ctx.req.complete) ctx.set('Connection', 'close');
    send(ctx, status, <ProblemPage problem={problem} />);
  }

  /** Anything a page did not answer itself becomes a page too, never the API's JSON. */
  async function catchProblems(ctx: KoaContext, next: Next): Promise<void> {
    try {
      await next();
    } catch (error) {
      const { status, code, headers, body, log } = toErrorResponse(error);
      // A procedure's failure was logged where it was settled (server/src/trpc/procedures.ts, settle).
      if (log && !(error instanceof TRPCError)) state(ctx).logger?.[log.level]({ err: error }, log.message);
      const retryAfter = headers['retry-after'] ? Number(headers['retry-after']) : undefined;
      if (retryAfter) ctx.set('Retry-After', String(retryAfter));
      // A 503 the code words itself (an identity provider away) says what is away; the body's is generic.
      const away = error instanceof AppError && code === 'SERVICE_UNAVAILABLE' && error.message !== body.message ? error.message : undefined;
      sendProblem(ctx, status, problemFor(code, body.message, retryAfter, away));
    }
  }

  /** Where a refused form sends its reader back to: the page it came from, if it has one of its own. */
  const formPageOf = (path: string) =>
    path === '/logout' || path.startsWith('/account') ? { href: '/account', label: 'Back to your account' } : { href: path, label: 'Open the form again' };

  /**
   * Every page POST: from this site (its `Origin`, or without one `Sec-Fetch-Site`), checked
   * before the body is read; then a readable form; then the CSRF token of this visitor and
   * session. Any refusal is a 403 page, and nothing has been done.
   */
  async function acceptForm(ctx: KoaContext, next: Next): Promise<void> {
    const info = requestInfoOf(ctx);
    if (info.browserWrite?.crossSite) return sendProblem(ctx, 403, refusedFormProblem(formPageOf(ctx.path)));
    const form = await readFormBody(ctx);
    const visitor = readCookie(ctx.get('cookie'), visitorCookie);
    if (!csrfTokenMatches(deps.formKey, visitor, sessionCookie(ctx), form.text(CSRF_FIELD))) {
      csrf(ctx);
      return sendProblem(ctx, 403, refusedFormProblem(formPageOf(ctx.path)));
    }
    info.browserWrite = CHECKED_BY_PAGE;
    ctx.state.form = form;
    return next();
  }

  return {
    deps,
    context,
    call,
    csrf,
    sessionCookie,
    send,
    redirect,
    clearSession,
    get(router: Router, path: string, handler: PageHandler) {
      router.get(path, catchProblems, handler);
    },
    post(router: Router, path: string, handler: FormHandler) {
      router.post(path, catchProblems, acceptForm, (ctx) => handler(ctx, ctx.state.form as FormFields));
    },
  };
}
