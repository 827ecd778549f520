/** The URL without its credentials or query, for logs, mails and the activity log. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}
