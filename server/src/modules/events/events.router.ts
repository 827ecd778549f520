import { z } from 'zod';
import type { Context } from '../../trpc/context.ts';
import { successOutput } from '../../lib/validation.ts';
import { restRoute } from '../../trpc/rest-meta.ts';
import { adminProcedure } from '../access/index.ts';
import type { AuthContext } from '../sessions/index.ts';
import * as s from './events.schemas.ts';
import * as eventsAdmin from './events.service.ts';
import type { Actor } from '../../lib/request.ts';

const NO_ENDPOINT = 'no such event endpoint';
const DISABLED = 'the endpoint is disabled; nothing is sent to it until it is enabled';
/** events.targets.ts: the sender checks again before every send, on the address it connects to. */
const REFUSED_URL = "the URL's host resolves to a private, loopback, link-local or other special address, or not at all within 2 s (issue path `url`)";
const actor = (ctx: Context & { auth: AuthContext }): Actor => ({ accountId: ctx.auth.account.id, request: ctx.request });

/**
 * Events out for operators (docs/EVENTS.md): the endpoints that receive our signed webhooks,
 * their deliveries, a test ping. Merged into admin.* in the contract's order.
 */
export const eventProcedures = {
  createEventEndpoint: adminProcedure
    .meta(restRoute('POST', '/admin/event-endpoints', 'Add an endpoint that receives signed events; its secret is shown this once', {
      protect: true,
      successStatus: 201,
      errors: { VALIDATION_FAILED: REFUSED_URL },
    }))
    .input(s.createEndpointInput)
    .output(s.createEndpointOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await eventsAdmin.createEndpoint(ctx.deps, actor(ctx), input);
      ctx.response.status = 201;
      return created;
    }),

  eventEndpoints: adminProcedure
    .meta(restRoute('GET', '/admin/event-endpoints', 'Every event endpoint', { protect: true }))
    .input(z.void())
    .output(s.endpointsOutput)
    .query(({ ctx }) => eventsAdmin.listEndpoints(ctx.deps, actor(ctx))),

  updateEventEndpoint: adminProcedure
    .meta(restRoute('PATCH', '/admin/event-endpoints/{id}', 'Change an endpoint: its URL, event types, description, or whether it is sent to', {
      protect: true,
      errors: { VALIDATION_FAILED: REFUSED_URL, NOT_FOUND: NO_ENDPOINT },
    }))
    .input(s.updateEndpointInput)
    .output(s.endpointOutput)
    .mutation(({ ctx, input }) => eventsAdmin.updateEndpoint(ctx.deps, actor(ctx), input)),

  rotateEventEndpointSecret: adminProcedure
    .meta(restRoute('POST', '/admin/event-endpoints/{id}/rotate-secret', 'A new signing secret; the old one signs beside it during the grace', {
      protect: true,
      errors: { NOT_FOUND: NO_ENDPOINT },
    }))
    .input(s.rotateSecretInput)
    .output(s.secretOutput)
    .mutation(({ ctx, input }) => eventsAdmin.rotateEndpointSecret(ctx.deps, actor(ctx), input.id, input.grace_seconds)),

  deleteEventEndpoint: adminProcedure
    .meta(restRoute('DELETE', '/admin/event-endpoints/{id}', 'Remove an endpoint and its deliveries', {
      protect: true,
      errors: { NOT_FOUND: NO_ENDPOINT },
    }))
    .input(s.endpointIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => eventsAdmin.deleteEndpoint(ctx.deps, actor(ctx), input.id)),

  eventDeliveries: adminProcedure
    .meta(restRoute('GET', '/admin/event-deliveries', 'Deliveries of events, newest first, filtered and a page at a time', {
      protect: true,
      errors: { VALIDATION_FAILED: 'a filter is invalid or unknown (see `issues`), or the cursor is not one this list gave out' },
    }))
    // Every field is optional: a tRPC call may give no input, as a REST request gives no query.
    .input(s.listDeliveriesInput.prefault({}))
    .output(s.deliveriesOutput)
    .query(({ ctx, input }) => eventsAdmin.listDeliveries(ctx.deps, actor(ctx), input)),

  eventDelivery: adminProcedure
    .meta(restRoute('GET', '/admin/event-deliveries/{id}', 'One delivery with the body it sends and its last ten attempts', {
      protect: true,
      errors: { VALIDATION_FAILED: 'the id is not a delivery id', NOT_FOUND: 'no such delivery' },
    }))
    .input(s.deliveryIdInput)
    .output(s.deliveryOutput)
    .query(({ ctx, input }) => eventsAdmin.showDelivery(ctx.deps, actor(ctx), input.id)),

  retryEventDelivery: adminProcedure
    .meta(restRoute('POST', '/admin/event-deliveries/{id}/retry', 'Send one delivery again now, from the start of the schedule', {
      protect: true,
      errors: { NOT_FOUND: 'no such delivery', CONFLICT: DISABLED },
    }))
    .input(s.deliveryIdInput)
    .output(successOutput)
    .mutation(({ ctx, input }) => eventsAdmin.retryDelivery(ctx.deps, actor(ctx), input.id)),

  retryDeadEventDeliveries: adminProcedure
    .meta(restRoute('POST', '/admin/event-endpoints/{id}/retry-dead', "Send the endpoint's dead and skipped deliveries again", {
      protect: true,
      errors: { NOT_FOUND: NO_ENDPOINT, CONFLICT: DISABLED },
    }))
    .input(s.retryDeadInput)
    .output(s.retriedOutput)
    .mutation(({ ctx, input }) => eventsAdmin.retryDeadDeliveries(ctx.deps, actor(ctx), input.id, input.since)),

  testEventEndpoint: adminProcedure
    .meta(restRoute('POST', '/admin/event-endpoints/{id}/test', 'Send a ping event (data {}) to this endpoint alone', {
      protect: true,
      errors: { NOT_FOUND: NO_ENDPOINT, CONFLICT: DISABLED },
    }))
    .input(s.endpointIdInput)
    .output(s.testEndpointOutput)
    .mutation(({ ctx, input }) => eventsAdmin.testEndpoint(ctx.deps, actor(ctx), input.id)),
};
