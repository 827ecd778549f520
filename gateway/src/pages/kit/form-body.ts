import type { Context as KoaContext } from 'koa';
import { koaBody } from 'koa-body';
import { AppError, hasControlCharacter } from '../../../../server/src/index.ts';
import { contentTypeOf } from '../../http.ts';

/**
 * The longest field of any form is a new passkey's answer: about 2 KiB URL-encoded, as the
 * service asks for no attestation (`none`); passwords stop at 128 characters.
 */
export const FORM_BODY_LIMIT = 8 * 1024;
/** The largest form has five fields; anything near this many is not one of ours. */
const MAX_FIELDS = 16;

/**
 * koa-body reads the body (the limit, the declared length, UTF-8); its own parse (qs) would
 * turn `a[]=` into an array and a repeated field into a list, so the fields are read from the
 * bytes it keeps, as flat pairs, below.
 */
const readBody = koaBody({ urlencoded: true, json: false, text: false, multipart: false, formLimit: FORM_BODY_LIMIT, encoding: 'utf-8', includeUnparsed: true, patchNode: false });

/** A posted form's fields: each at most once, text only. A missing field reads as ''. */
export type FormFields = {
  text(name: string): string;
  has(name: string): boolean;
};

/**
 * Reads a page's form body: `application/x-www-form-urlencoded` in UTF-8, at most 8 KiB, each
 * field once, no control character anywhere (no field has a use for one, and NUL cannot be
 * stored). Parsed as flat name=value pairs, so `a[]=` or `a[b]=` is a field of that odd name,
 * never an array or object where a string is expected. Anything else is a 4xx.
 */
export async function readFormBody(ctx: KoaContext): Promise<FormFields> {
  const { type, charset } = contentTypeOf(ctx);
  if (type !== 'application/x-www-form-urlencoded' || (charset && charset !== 'utf-8' && charset !== 'utf8')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'This address takes the form on its page, sent by a browser.');
  }
  await readBody(ctx, async () => {});
  const raw: unknown = (ctx.request as { rawBody?: unknown }).rawBody;
  const fields = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(typeof raw === 'string' ? raw : '')) {
    if (fields.has(name)) throw new AppError('VALIDATION_FAILED', 'A field of the form was sent more than once.');
    if (hasControlCharacter(name) || hasControlCharacter(value)) {
      throw new AppError('VALIDATION_FAILED', 'The form holds a control character (such as a line break or NUL), which no field accepts.');
    }
    fields.set(name, value);
    if (fields.size > MAX_FIELDS) throw new AppError('VALIDATION_FAILED', 'The form has more fields than any of ours.');
  }
  return { text: (name) => fields.get(name) ?? '', has: (name) => fields.has(name) };
}
