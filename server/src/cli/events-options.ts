import { z } from 'zod';
import { eventsAdminSchemas as s } from '../admin/admin.schemas.ts';
import type { Deps } from '../index.ts';
import { UsageError } from './output.ts';
import { withServices, type EventsAdminService } from './session.ts';

// What the events commands share: the API's schemas and names read as option values, and the
// events services with their dependencies.

export const EVENT_TYPES_HELP = `comma-separated event types, or all: ${s.EVENT_TYPES.join(', ')}`;
export const DELIVERY_STATES_HELP = `only deliveries in this state: ${s.listDeliveriesInput.shape.state.unwrap().options.join(', ')}`;

/** `--events a,b` as the API's list of types, `all` as null (every type), for the schema to judge. */
export function eventTypesOption(text: string | undefined): string[] | null | undefined {
  if (text === undefined) return undefined;
  if (text.trim() === 'all') return null;
  return text.split(',').map((type) => type.trim());
}

/**
 * Parses with the API's schema, the issues of a field the command gives under a name of its
 * own named as the command spells it: `add <url>` is the API's `url`, and `retry --dead
 * --endpoint` the route's `id`.
 */
export function parseNamed<T>(schema: z.ZodType<T>, input: unknown, names: Record<string, string>): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new z.ZodError(result.error.issues.map((issue) => ({ ...issue, path: issue.path.map((key) => (typeof key === 'string' && names[key]) || key) })));
}

/**
 * The service's refusal of a field the command gives under a name of its own (where `add
 * <url>` may send: a private address, a name that does not resolve), named as the command
 * spells it, as parseNamed names the schema's.
 */
export async function withNamedIssues<T>(work: () => Promise<T>, names: Record<string, string>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const { AppError } = await import('../index.ts');
    const issues = error instanceof AppError ? error.extra.issues : undefined;
    if (!(error instanceof AppError) || !issues) throw error;
    throw new AppError(error.code, undefined, { ...error.extra, issues: issues.map((issue) => ({ ...issue, path: names[issue.path] ?? issue.path })) });
  }
}

/** The events services, built as every command builds its services (session.ts). */
export function withEvents<T>(work: (events: EventsAdminService, deps: Deps) => Promise<T>): Promise<T> {
  return withServices(async (_admin, deps) => work((await import('../index.ts')).eventsAdminService, deps));
}

/**
 * The service refuses to send to a disabled endpoint (409 in the API); told here the CLI's
 * way to enable it. Nothing was changed.
 */
export async function explainDisabledEndpoint<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const { toErrorResponse } = await import('../index.ts');
    if (toErrorResponse(error).code !== 'CONFLICT') throw error;
    throw new UsageError('the endpoint is disabled, so nothing is sent to it: enable it first (events endpoints update <endpoint id> --enable)');
  }
}
