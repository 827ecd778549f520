import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from '../../../../server/src/index.ts';

/**
 * CSRF protection of the pages' forms: a signed double submit (OWASP). The browser holds a
 * random visitor id in an HttpOnly cookie; every form carries an HMAC of that id, keyed with
 * `deps.formKey`. Another site can make the browser send the cookie but cannot read it, nor
 * the token in our pages, nor make one without the key. The token also covers the session
 * cookie the page was shown with, so a form shown before a sign-in (or to another session)
 * is not accepted after it. Nothing is stored server-side.
 */
export const VISITOR_COOKIE = 'svc_visitor';

/** The name of the hidden field every POST form carries. */
export const CSRF_FIELD = 'csrf_token';

const VISITOR_ID = /^[A-Za-z0-9_-]{22}$/;

export function newVisitorId(): string {
  return randomBytes(16).toString('base64url');
}

export function isVisitorId(value: string | undefined): value is string {
  return value !== undefined && VISITOR_ID.test(value);
}

export function csrfToken(formKey: Buffer, visitorId: string, sessionCookie: string | undefined): string {
  // The separator cannot occur in a visitor id, so no two (visitor, session) pairs share an input.
  return createHmac('sha256', formKey).update(`csrf:v1:${visitorId}:${sessionCookie ?? ''}`).digest('base64url');
}

/** Whether `presented` is the token of this visitor and session cookie, compared in constant time. */
export function csrfTokenMatches(formKey: Buffer, visitorId: string | undefined, sessionCookie: string | undefined, presented: string): boolean {
  if (!isVisitorId(visitorId) || !presented) return false;
  return safeEqual(presented, csrfToken(formKey, visitorId, sessionCookie));
}
