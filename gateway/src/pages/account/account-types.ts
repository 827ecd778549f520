import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../../server/src/index.ts';
import type { FormState, Notice } from '../kit/components.tsx';

type AuthOutputs = inferRouterOutputs<AppRouter>['auth'];

/** What the account page shows, as the procedures answered it. */
export type AccountData = {
  user: AuthOutputs['me']['user'];
  sessions: AuthOutputs['listSessions']['sessions'];
  activity: AuthOutputs['listActivity']['items'];
  /** The e-mail change waiting for its link, if any: shown with a button to cancel it. */
  pendingEmail: AuthOutputs['pendingEmailChange']['pending'];
  /** The second factor: authenticator app on or off, passkeys, recovery codes left. */
  mfa: AuthOutputs['mfaStatus'];
  /** The account's role needs a second factor before anything else (its activity is closed until then). */
  mfaSetupRequired: boolean;
  /** Its connected identity providers and whether it has a password (absent while a second factor must be set up first). */
  identities?: AuthOutputs['identities'];
  /** The identity providers one may connect. */
  providers: AuthOutputs['oauthProviders']['providers'];
};

/** The account page's forms, each in its own card (the second factor's in sections of one). */
export type AccountForm = 'profile' | 'key' | 'password' | 'email' | 'sessions' | 'delete' | 'totp' | 'passkeys' | 'recovery' | 'identities';

/** A form of the page shown again: its values and field errors, and a message in its card; `target` is the row it was about. */
export type AccountFormState = { name: AccountForm; form?: FormState; notice?: Notice; target?: string };

/** A step of setting up a second factor, shown in its card in place of the usual forms. */
export type MfaStage =
  /** The new authenticator secret as a QR code (SVG made on the server) and as text, with the form that turns it on. */
  | { kind: 'totp-setup'; secret: string; otpauthUrl: string; qrSvg: string }
  /** Creation options for a passkey: the script makes it and sends the form. */
  | { kind: 'passkey-finish'; options: string }
  /** Recovery codes, in this answer only, under what was just done (a factor turned on, new codes made). */
  | { kind: 'recovery-codes'; codes: string[]; done: string };

export type AccountPageProps = {
  csrf: string;
  data: AccountData;
  /** A page-wide message, e.g. after a change was made. */
  notice?: Notice;
  /** The API key, only in the answer to the owner asking to see it (or a rotation). */
  apiKey?: string;
  refused?: AccountFormState;
  mfaStage?: MfaStage;
};
