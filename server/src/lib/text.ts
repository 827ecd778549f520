const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** For text placed in HTML (mails, pages): element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checked before a value reaches a uuid column: anything else would be a cast error, not a miss. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

// fatal: bytes that are not UTF-8 are an error rather than U+FFFD put in their place; the
// default ignoreBOM=false makes the decoder drop a leading UTF-8 BOM.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `bytes` as UTF-8 text (a leading BOM dropped), or undefined when they are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

// C0, DEL and C1. PostgreSQL cannot store NUL in text at all, and no field of ours has a use
// for the others; they are how a log line, a header or a mail gets split.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

// Characters a bare address never holds (RFC 5322 specials, spaces of any script, invisible
// format characters) and the look-alikes of `@` that would let `a＠b.example<c@d.example>`
// read as one address to a person and as another to a mail library.
const NOT_IN_ADDRESS = /[\s"(),:;<>[\\\]\p{Cc}\p{Cf}\p{Z}\uff20\ufe6b]/u;
const LOCAL_PART = /^[^.@]+(?:\.[^.@]+)*$/u;
const DOMAIN_LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?$/u;

/**
 * A bare address (`local@domain`, no display name, comment or quoted part), NFC-normalised
 * and lower-cased, or undefined. The domain needs a dot: mail to a bare host name is not
 * something an account can verify.
 */
export function parseBareEmail(text: string): string | undefined {
  const address = text.trim().normalize('NFC');
  if (address.length > 254 || NOT_IN_ADDRESS.test(address)) return undefined;
  const at = address.indexOf('@');
  if (at < 1 || at !== address.lastIndexOf('@')) return undefined;
  const local = address.slice(0, at);
  const labels = address.slice(at + 1).split('.');
  if (local.length > 64 || !LOCAL_PART.test(local)) return undefined;
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) return undefined;
  return address.toLowerCase().normalize('NFC');
}

/** Half of a surrogate pair, alone: JSON can carry one (`"\\ud800"`), UTF-8 cannot. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `text` cannot be taken as a field's text, or undefined when it can. */
function textProblem(text: string): string | undefined {
  if (hasControlCharacter(text)) return 'must not contain control characters';
  if (LONE_SURROGATE.test(text)) return 'must be Unicode text (it holds half of a surrogate pair)';
  return undefined;
}

/**
 * Every string in `value` (keys included) that cannot be taken as text, by dotted path: one
 * holding a control character, or half of a surrogate pair, which would be stored as U+FFFD.
 */
export function textIssues(value: unknown, path = '', depth = 0): Array<{ path: string; message: string }> {
  if (typeof value === 'string') {
    const message = textProblem(value);
    return message ? [{ path: path || '(body)', message }] : [];
  }
  if (typeof value !== 'object' || value === null || depth > 20) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const itemPath = path ? `${path}.${key}` : key;
    const message = textProblem(key);
    return message ? [{ path: itemPath, message }] : textIssues(item, itemPath, depth + 1);
  });
}

/** What Telegram takes as a `secret_token` (setWebhook): 1 to 256 of A-Z a-z 0-9 _ -; the setting and the scheme check it alike. */
export const TELEGRAM_SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
