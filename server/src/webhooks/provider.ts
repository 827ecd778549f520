import type { ZodType } from 'zod';
import type { Deps } from '../deps.ts';
import type { Tx } from '../lib/db.ts';
import type { WebhookHeaders } from './shared/signature.ts';

/**
 * The endpoint a delivery came in on: one name from route to inbox column to file
 * (`providers/<name>.ts`), the names the operator API uses (docs/API.md). The protocol behind it is a
 * scheme (`schemes/`): operator and messengerone both speak Telegram's.
 */
export const PROVIDER_NAMES = ['billing', 'payment', 'operator', 'messengerone', 'messengertwo'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** An inbox row as the worker reads it back. `scope` is the site key or channel id ('' if none). */
export type InboxEntry = { id: string; provider: ProviderName; scope: string; payload: Buffer; receivedAt: Date };

export type Outcome = { state: 'processed' } | { state: 'ignored'; reason: string };

export const PROCESSED: Outcome = { state: 'processed' };
export const ignored = (reason: string): Outcome => ({ state: 'ignored', reason });

/**
 * The locks an effect takes, by kind, in the order every transaction takes them: rows of
 * `accounts`, then the effect's named locks (a payment, a subscription), then the accounts'
 * event-ordering locks (modules/events). The domain functions declare them (sites, billing, channels).
 */
export type EffectLocks = { accounts?: number[]; names?: string[]; orderings?: string[] };

/** A domain step's answer (a reason it changed nothing, or undefined) as an outcome. */
export const outcomeOf = (reason: string | undefined): Outcome => (reason === undefined ? PROCESSED : ignored(reason));

/**
 * Everything about one webhook endpoint. The gateway mounts `route`, intake looks the secret
 * up and verifies the exact bytes, the worker parses what was kept and applies it. Verify
 * and parse are pure (fixed bytes and a fixed `now` in the tests); only `secret` and
 * `handle` touch the database.
 */
export type WebhookProvider<Secret, Event> = {
  name: ProviderName;
  /** The path the provider posts to; `:scope` is the site key or channel id. */
  route: string;
  /** For routes with `:scope`: the scope as kept, or undefined when it cannot exist (404). */
  scope?: (raw: string) => string | undefined;
  /** What the route answers when the scope has no secret: 'No such site.' */
  notFound?: string;
  /**
   * The secret a delivery is checked against; undefined when the scope does not exist. A
   * scoped one names its account: the cached copy goes when the account changes (is deleted).
   * Throws AppError SERVICE_UNAVAILABLE while an unscoped endpoint is not configured.
   */
  secret(deps: Deps, scope: string): Promise<{ secret: Secret; accountId?: number } | undefined>;
  /** Throws SignatureError (401, nothing kept) or PayloadError (400). */
  verify(raw: Buffer, headers: WebhookHeaders, secret: Secret, now: Date): Event;
  /** The provider's id of the delivery: a second delivery with it, in the same scope, is a repeat. */
  externalId(event: Event): string;
  /**
   * True where the deliveries of one scope must take effect in the order they arrived: a
   * channel's visitor messages, which a conversation and its `message.received` events read
   * in. The worker then applies them one after another (inbox/dispatcher.ts; the queue's
   * jobs too, roles/worker.ts). Left out, a scope's deliveries may be applied in parallel
   * lanes: a payment's or a subscription's changes keep their own order by rules of their
   * own, whatever comes first.
   */
  inArrivalOrder?: true;
  /** Parses bytes that were verified on the way in. */
  parse(raw: Buffer): Event;
  /** The fields `parse` reads, as its scheme checks them: the request body of the API reference. */
  payload: ZodType;
  /**
   * Applies the event in the worker's transaction: effect and inbox state commit together.
   * It runs once the transaction holds every lock that `locks` names for its chunk.
   */
  handle(deps: Deps, tx: Tx, event: Event, entry: InboxEntry): Promise<Outcome>;
  /**
   * Applies several events, in order, with the effect of as many calls of `handle`, in fewer
   * statements: the worker hands it each run of its chunk's entries that are this provider's.
   */
  handleAll?(deps: Deps, tx: Tx, items: Array<{ event: Event; entry: InboxEntry }>): Promise<Outcome[]>;
  /**
   * The locks `handle` takes for these events (none if left out), so that a chunk of several
   * entries can take all its locks first, in one order (inbox/processor.ts).
   */
  locks?(deps: Deps, tx: Tx, items: Array<{ event: Event; entry: InboxEntry }>): Promise<EffectLocks>;
};

/** Any provider of the registry, whatever its secret and event types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyWebhookProvider = WebhookProvider<any, any>;

/** Type-checks one provider against its own secret and event types. */
export const defineProvider = <Secret, Event>(provider: WebhookProvider<Secret, Event>): WebhookProvider<Secret, Event> => provider;
