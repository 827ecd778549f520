import type { ErrorCode } from '../../../../server/src/index.ts';
import type { Problem } from './problem.view.tsx';
import { waitText } from './wording.ts';

/** A form refused before anything was done: no valid CSRF token, or sent from another site. */
export function refusedFormProblem(back: { href: string; label: string }): Problem {
  return {
    title: 'This form could not be accepted',
    text:
      'Nothing was changed. We only accept forms sent from our own pages, and this one could not be checked: it may have been ' +
      'open too long, opened before you signed in or out, or sent from another site. Open the page again and retry.',
    back,
  };
}

const START = { href: '/login', label: 'Go to sign in' };

/**
 * What a person is told when a page request fails as a whole (an unreadable form, a database
 * outage). 4xx messages the gateway wrote for people are shown as they are; a 5xx never
 * says more than that it is our fault, and, for a 503, what is away (`unavailable`, when the
 * code that refused said so: an identity provider; else the database).
 */
export function problemFor(code: ErrorCode, message: string, retryAfterSeconds?: number, unavailable?: string): Problem {
  switch (code) {
    case 'PAYLOAD_TOO_LARGE':
      return { title: 'Form too large', text: `${message} That is more than any of our forms holds. Nothing was changed.`, back: START };
    case 'UNSUPPORTED_MEDIA_TYPE':
    case 'VALIDATION_FAILED':
      return { title: 'Form not understood', text: `${message} Nothing was changed.`, back: START };
    case 'INVALID_JSON':
      return { title: 'Form not understood', text: 'The form could not be read as sent. Nothing was changed.', back: START };
    case 'RATE_LIMITED':
      return { title: 'Too many attempts', text: `Please wait ${waitText(retryAfterSeconds ?? 60)} and try again.`, back: START };
    case 'SERVICE_UNAVAILABLE':
      return { title: 'Temporarily unavailable', text: unavailable ?? 'We cannot reach our database right now. Please try again in a few seconds.', back: START };
    case 'NOT_FOUND':
    case 'METHOD_NOT_ALLOWED':
      return { title: 'Page not found', text: 'There is no such page.', back: START };
    case 'UNAUTHORIZED':
      return { title: 'Please sign in', text: 'Your session has ended. Sign in again to continue.', back: START };
    default:
      return code === 'INTERNAL_ERROR'
        ? { title: 'Something went wrong', text: 'Something went wrong on our side, and it has been logged. Please try again later.', back: START }
        : { title: 'Request refused', text: message, back: START };
  }
}
