import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../server/src/router.ts';
import type { FormState, Notice } from './components.tsx';

type AuthOutputs = inferRouterOutputs<AppRouter>['auth'];

/** What the account page shows, as the procedures answered it. */
export type AccountData = {
  user: AuthOutputs['me']['user'];
  sessions: AuthOutputs['listSessions']['sessions'];
  activity: AuthOutputs['listActivity']['items'];
  /** The e-mail change waiting for its link, if any: shown with a button to cancel it. */
  pendingEmail: AuthOutputs['pendingEmailChange']['pending'];
};

/** The account page's forms, each in its own card. */
export type AccountForm = 'key' | 'password' | 'email' | 'sessions' | 'delete';

/** A form of the page shown again: its values and field errors, and a message in its card. */
export type AccountFormState = { name: AccountForm; form?: FormState; notice?: Notice };

export type AccountPageProps = {
  csrf: string;
  data: AccountData;
  /** A page-wide message, e.g. after a change was made. */
  notice?: Notice;
  /** The API key, only in the answer to the owner asking to see it (or a rotation). */
  apiKey?: string;
  refused?: AccountFormState;
};
