import { z } from 'zod';
import { parseBareEmail } from './text.ts';

/**
 * Every procedure's input is a strict object: a field it does not know is refused, never
 * dropped, so a misspelt `grace_second` cannot rotate a key with no grace at all.
 */
export const strictInput = z.strictObject;

/** The input of a mutation that takes none: nothing, or an empty object, and no stray field. */
export const noInput = z.strictObject({}).optional();

export const successOutput = z.object({ success: z.literal(true) });

export const messageOutput = z.object({ success: z.literal(true), message: z.string() });

// A bare address only: a display name or a second address in <> would reach the mailer.
export const emailSchema = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .transform((text, ctx) => {
    const email = parseBareEmail(text);
    if (email === undefined) ctx.addIssue({ code: 'custom', message: 'must be a bare e-mail address (local@domain)' });
    return email ?? z.NEVER;
  });

// Never trimmed or truncated: the password is exactly what was typed.
export const passwordSchema = z.string().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters');

/** A password being checked, not set: any length a stored one could have had. */
export const currentPasswordSchema = z.string().min(1).max(128);

/** The most characters a person's name has, typed or given by an identity provider. */
export const NAME_MAX_LENGTH = 100;

/** A token from a mailed link. */
export const tokenSchema = z.string().min(1).max(200, 'must be at most 200 characters');

const TYPE_WORDS: Record<string, string> = {
  string: 'must be text',
  number: 'must be a number',
  int: 'must be a whole number',
  boolean: 'must be true or false',
  object: 'must be a JSON object',
  array: 'must be a list',
  void: 'takes no input',
  undefined: 'takes no input',
};

const FORMAT_WORDS: Record<string, string> = {
  datetime: 'must be an ISO-8601 date and time, e.g. 2026-11-23T12:00:00Z',
  email: 'must be an e-mail address',
  url: 'must be a URL',
  uuid: 'must be a UUID',
};

type RawIssue = z.core.$ZodRawIssue;

function sizeWords(issue: RawIssue & { origin?: string }, bound: 'at least' | 'at most', limit: number | bigint): string {
  if (issue.origin === 'string') return limit === 1 && bound === 'at least' ? 'must not be empty' : `must be ${bound} ${limit} characters`;
  if (issue.origin === 'array' || issue.origin === 'set') return `must have ${bound} ${limit} items`;
  return `must be ${bound} ${limit}`;
}

/**
 * What a rule says when its schema gives no words of its own, as the end of a sentence that
 * starts with the field's name: `password` + "is required". zod's own ("Invalid input:
 * expected string, received undefined") speaks to a programmer, not to the person who typed
 * the value. Installed below, when this file loads: every schema of ours is built from it, so
 * whatever parses (a procedure, the CLI before it loads the server, a page) speaks the same
 * words. A schema's own message wins over it.
 */
export function ruleWords(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined && issue.expected !== 'void' && issue.expected !== 'undefined') return 'is required';
      if (issue.input === null) return 'must not be null';
      return TYPE_WORDS[issue.expected] ?? `must be ${issue.expected}`;
    case 'too_small':
      return sizeWords(issue, 'at least', issue.minimum);
    case 'too_big':
      return sizeWords(issue, 'at most', issue.maximum);
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${JSON.stringify(issue.values[0])}` : `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'invalid_format':
      return FORMAT_WORDS[issue.format] ?? `must be a valid ${issue.format}`;
    case 'unrecognized_keys':
      return UNKNOWN_FIELD;
    case 'invalid_union':
      return 'is not valid';
    default:
      return undefined;
  }
}

z.config({ customError: ruleWords });

/** What an unknown field is told; errors/errors.ts (zodIssues) names each such field on its own. */
export const UNKNOWN_FIELD = 'is not a field of this request';
