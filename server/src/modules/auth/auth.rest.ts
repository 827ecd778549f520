import { restRoute, type RestRoute } from '../../trpc/rest-meta.ts';

/** The REST route of an auth procedure, under /api/v1/auth. */
export const rest = (method: 'GET' | 'POST' | 'DELETE', path: string, summary: string, route: RestRoute) => restRoute(method, `/auth/${path}`, summary, route);
