/** The URL without its credentials or query, for logs, mails and the activity log. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * Where a request goes: fetch refuses a URL that holds credentials, so they travel as an
 * `Authorization: Basic` header instead, as curl and browsers send them.
 */
export function requestTarget(url: string): { url: string; headers: Record<string, string> } {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return { url, headers: {} };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } };
}
