import type { Config } from '../../server/src/config.ts';

// The API reads cookies where it reads the other credentials; the pages read theirs the same way.
export { readCookie } from '../../server/src/trpc/context.ts';

/**
 * A `Set-Cookie` value with the attributes every Gatehouse cookie has: the whole site,
 * out of scripts' reach, withheld from other sites' subrequests and POSTs, and `Secure` when
 * the service is reached over https. Without `maxAgeSeconds` it lasts as long as the browser.
 */
export function cookieHeader(config: Pick<Config, 'publicUrl'>, name: string, value: string, maxAgeSeconds?: number): string {
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const maxAge = maxAgeSeconds === undefined ? '' : `; Max-Age=${maxAgeSeconds}`;
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${maxAge}${secure}`;
}

/** The `Set-Cookie` value that makes a browser drop cookie `name`. */
export function clearedCookieHeader(config: Pick<Config, 'publicUrl'>, name: string): string {
  return cookieHeader(config, name, '', 0);
}
