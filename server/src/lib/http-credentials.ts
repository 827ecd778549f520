// How credentials travel in HTTP headers, written once: the Bearer token of `Authorization`,
// and the cookies, read from `Cookie` and set with the attributes every Gatehouse cookie has.
// The procedures' context, the sessions module, the pages and GET /metrics all use these.

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined for anything else. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? BEARER.exec(authorization)?.[1] : undefined;
}

/** The value of cookie `name` in a `Cookie` header, or undefined when absent or empty. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      const value = part.slice(index + 1).trim();
      return value || undefined;
    }
  }
  return undefined;
}

/**
 * The name a cookie is set and read under: over https every cookie but `svc_token` carries
 * the `__Host-` prefix, which a browser keeps only with Secure and Path=/ and without
 * Domain, so a subdomain cannot plant or widen it.
 */
export function hostCookieName(config: { publicUrl: string }, name: string): string {
  return config.publicUrl.startsWith('https:') ? `__Host-${name}` : name;
}

/**
 * A `Set-Cookie` value with the attributes every Gatehouse cookie has: the whole site,
 * out of scripts' reach, withheld from other sites' subrequests and POSTs, and `Secure` when
 * the service is reached over https. Without `maxAgeSeconds` it lasts as long as the browser.
 */
export function cookieHeader(config: { publicUrl: string }, name: string, value: string, maxAgeSeconds?: number): string {
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const maxAge = maxAgeSeconds === undefined ? '' : `; Max-Age=${maxAgeSeconds}`;
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${maxAge}${secure}`;
}

/** The `Set-Cookie` value that makes a browser drop cookie `name`. */
export function clearedCookieHeader(config: { publicUrl: string }, name: string): string {
  return cookieHeader(config, name, '', 0);
}
