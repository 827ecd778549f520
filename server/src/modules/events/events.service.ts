import { randomUUID } from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { recordAction } from '../activity/index.ts';
import { EVENT_TYPES, type CreateEndpointInput, type ListDeliveriesInput, type UpdateEndpointInput } from './events.schemas.ts';
import { eventBody, newEventId } from './events.outbox.ts';
import * as repo from './events.repo.ts';
import { newSecret, previousSecretPlace, secretPlace } from './events.signing.ts';
import { checkTarget as checkEventTarget } from './events.targets.ts';
import { redactedUrl } from './events.urls.ts';
import type { Actor } from '../../lib/request.ts';

// The operators' side of events out (docs/EVENTS.md): endpoints, their deliveries, a test
// ping. Each action is recorded in the acting admin's activity log, never with a secret or
// the URL's credentials and query (recordAction, the activity module's).

const DEFAULT_PAGE = 50;

const iso = (date: Date | null) => date?.toISOString() ?? null;


const toEndpoint = (row: repo.EndpointRow) => ({
  id: row.id,
  url: row.url,
  description: row.description,
  events: (row.events ?? [...EVENT_TYPES]) as Array<(typeof EVENT_TYPES)[number]>,
  enabled: row.enabled,
  created_at: row.created_at.toISOString(),
});

const notFound = () => new AppError('NOT_FOUND', 'No such event endpoint.');

/**
 * Refuses a URL whose host may not receive events (modules/events/events.targets.ts): one
 * that resolves to a private, loopback, link-local or other special address, or not at all
 * within 2 s. The sender checks again before every send, on the address it connects to.
 */
async function refuseForbiddenTarget(deps: Deps, url: string): Promise<void> {
  const target = await checkEventTarget(deps, new URL(url));
  if ('refused' in target) throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: 'url', message: target.refused }] });
}

/** A new endpoint and its secret, which is shown this once. */
export async function createEndpoint(deps: Deps, actor: Actor, input: CreateEndpointInput) {
  await refuseForbiddenTarget(deps, input.url);
  const id = randomUUID();
  const secret = newSecret();
  const row = await deps.db.transaction(async (tx) => {
    const created = await repo.insertEndpoint(tx, {
      id,
      url: input.url,
      description: input.description || null,
      events: input.events ?? null,
      secret_sealed: deps.secretBox.seal(secret, secretPlace(id)),
      created_at: deps.clock.now(),
    });
    await recordAction(tx, deps.clock, actor, 'admin.event_endpoint_created', { endpoint: id, url: redactedUrl(input.url), events: input.events ?? 'all' });
    return created;
  });
  return { success: true as const, endpoint: toEndpoint(row), secret };
}

/** Every endpoint; the read is recorded, as every admin action is. */
export async function listEndpoints(deps: Deps, actor: Actor) {
  const rows = await repo.endpointRows(deps.db);
  await recordAction(deps.db, deps.clock, actor, 'admin.event_endpoints_read', { what: 'list', count: rows.length });
  return { success: true as const, items: rows.map(toEndpoint) };
}

/**
 * Changes what was given. `enabled: false` stops sending at once (what was pending is kept
 * as skipped); `enabled: true` sends new events again and nothing older by itself.
 */
export async function updateEndpoint(deps: Deps, actor: Actor, input: UpdateEndpointInput) {
  if (input.url !== undefined) await refuseForbiddenTarget(deps, input.url);
  const row = await deps.db.transaction(async (tx) => {
    if (!(await repo.lockEndpoint(tx, input.id))) throw notFound();
    const now = deps.clock.now();
    if (input.enabled !== undefined) await repo.setEndpointEnabled(tx, input.id, input.enabled, now);
    const description = input.description === undefined ? undefined : input.description || null;
    const updated = await repo.updateEndpointRow(tx, input.id, { url: input.url, description, events: input.events }, now);
    const changed = (['url', 'events', 'enabled', 'description'] as const).filter((field) => input[field] !== undefined);
    await recordAction(tx, deps.clock, actor, 'admin.event_endpoint_updated', { endpoint: input.id, changed });
    return updated;
  });
  return { success: true as const, endpoint: toEndpoint(row) };
}

/** A new secret; the old one goes on signing beside it for `graceSeconds`. */
export async function rotateEndpointSecret(deps: Deps, actor: Actor, id: string, graceSeconds = 0) {
  const secret = newSecret();
  await deps.db.transaction(async (tx) => {
    if (!(await repo.lockEndpoint(tx, id))) throw notFound();
    const current = await repo.endpointSecretRow(tx, id);
    const now = deps.clock.now();
    const previous = graceSeconds > 0 && current
      ? { sealed: deps.secretBox.seal(deps.secretBox.open(current.secret_sealed, secretPlace(id)), previousSecretPlace(id)), until: new Date(now.getTime() + graceSeconds * 1000) }
      : null;
    await repo.replaceEndpointSecret(tx, id, deps.secretBox.seal(secret, secretPlace(id)), previous, now);
    await recordAction(tx, deps.clock, actor, 'admin.event_endpoint_secret_rotated', { endpoint: id, grace_seconds: graceSeconds });
  });
  return { success: true as const, secret };
}

export async function deleteEndpoint(deps: Deps, actor: Actor, id: string) {
  await deps.db.transaction(async (tx) => {
    if (!(await repo.deleteEndpointRow(tx, id))) throw notFound();
    await recordAction(tx, deps.clock, actor, 'admin.event_endpoint_deleted', { endpoint: id });
  });
  return { success: true as const };
}

const toDelivery = (row: repo.DeliveryRow) => ({
  id: row.id,
  endpoint_id: row.endpoint_id,
  event_id: row.event_id,
  type: row.type,
  state: row.state,
  attempts: row.attempts,
  last_status: row.last_status,
  last_error: row.last_error,
  next_attempt_at: row.state === 'pending' ? iso(row.next_attempt_at) : null,
  created_at: row.created_at.toISOString(),
});

/** The cursor is the last row's place in the list, opaque to callers. */
const encodeCursor = (row: repo.DeliveryRow) => Buffer.from(`d:${row.seq}`).toString('base64url');

function decodeCursor(cursor: string): string {
  const match = /^d:([0-9]{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match) return match[1];
  throw new AppError('VALIDATION_FAILED', undefined, { issues: [{ path: 'cursor', message: 'is not a cursor this list gave out' }] });
}

/** Newest first, filtered, a page at a time; `next_cursor` is null on the last page. */
export async function listDeliveries(deps: Deps, actor: Actor, input: ListDeliveriesInput) {
  const limit = input.limit ?? DEFAULT_PAGE;
  const before = input.cursor ? decodeCursor(input.cursor) : undefined;
  const rows = await repo.listDeliveryRows(deps.db, { endpointId: input.endpoint_id, state: input.state, type: input.type }, before, limit + 1);
  const page = rows.slice(0, limit);
  await recordAction(deps.db, deps.clock, actor, 'admin.event_deliveries_read', { what: 'list', filter: { ...input, cursor: undefined } });
  return { success: true as const, items: page.map(toDelivery), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null };
}

/** One delivery with the body it sends and its last attempts. */
export async function showDelivery(deps: Deps, actor: Actor, id: string) {
  const row = await repo.deliveryRow(deps.db, id);
  if (!row) throw new AppError('NOT_FOUND', 'No such event delivery.');
  await recordAction(deps.db, deps.clock, actor, 'admin.event_deliveries_read', { what: 'delivery', delivery: id });
  return { success: true as const, delivery: { ...toDelivery(row), body: row.body, attempts_log: row.attempts_log } };
}

const disabled = () => new AppError('CONFLICT', 'The endpoint is disabled: enable it first (PATCH enabled: true), then retry.');

/**
 * Sends the delivery again from the start of the schedule, whatever its state; its events
 * id stays the same. Refused while its endpoint is disabled: nothing is sent to one.
 */
export async function retryDelivery(deps: Deps, actor: Actor, id: string) {
  await deps.db.transaction(async (tx) => {
    const row = await repo.deliveryRow(tx, id);
    if (!row) throw new AppError('NOT_FOUND', 'No such event delivery.');
    if (!(await repo.requeueDelivery(tx, id, deps.clock.now()))) throw disabled();
    await recordAction(tx, deps.clock, actor, 'admin.event_delivery_retried', { delivery: id, was: row.state });
  });
  return { success: true as const };
}

/** The endpoint's dead and skipped deliveries (made at or after `since`), queued again. */
export async function retryDeadDeliveries(deps: Deps, actor: Actor, id: string, since: string | undefined) {
  const retried = await deps.db.transaction(async (tx) => {
    const endpoint = await repo.lockEndpoint(tx, id);
    if (!endpoint) throw notFound();
    if (!endpoint.enabled) throw disabled();
    const count = await repo.requeueFinished(tx, id, since ? new Date(since) : null, deps.clock.now());
    await recordAction(tx, deps.clock, actor, 'admin.event_deliveries_retried', { endpoint: id, since: since ?? null, retried: count });
    return count;
  });
  return { success: true as const, retried };
}

/** A `ping` (`data: {}`) to this endpoint alone, whatever types it asked for. */
export async function testEndpoint(deps: Deps, actor: Actor, id: string) {
  const deliveryId = randomUUID();
  await deps.db.transaction(async (tx) => {
    const endpoint = await repo.lockEndpoint(tx, id);
    if (!endpoint) throw notFound();
    if (!endpoint.enabled) throw new AppError('CONFLICT', 'The endpoint is disabled: enable it first (PATCH enabled: true).');
    const at = deps.clock.now();
    await repo.insertPing(tx, { id: newEventId(), type: 'ping', accountId: null, body: eventBody({ type: 'ping', data: {} }, at), at }, id, deliveryId);
    await recordAction(tx, deps.clock, actor, 'admin.event_endpoint_tested', { endpoint: id, delivery: deliveryId });
  });
  return { success: true as const, delivery_id: deliveryId };
}
