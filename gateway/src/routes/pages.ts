import type Router from '@koa/router';
import { TRPCError } from '@trpc/server';
import { koaBody } from 'koa-body';
import type { Context as KoaContext } from 'koa';
import { createContextInner } from '../../../server/src/context.ts';
import type { Deps } from '../../../server/src/deps.ts';
import { escapeHtml } from '../../../server/src/lib/text.ts';
import { appRouter } from '../../../server/src/router.ts';
import { createCallerFactory } from '../../../server/src/trpc.ts';

function page(ctx: KoaContext, status: number, title: string, inner: string): void {
  ctx.status = status;
  ctx.type = 'html';
  // The token sits in this page's URL: keep it out of caches and Referer headers.
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'");
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:480px;margin:4rem auto;padding:0 1rem}
button{font-size:1rem;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#1d4ed8;color:#fff;cursor:pointer}</style>
</head><body><h1>${escapeHtml(title)}</h1>${inner}</body></html>`;
}

const createCaller = createCallerFactory(appRouter);

/**
 * GET only shows a confirm button: mail scanners open links, and must not use up the token.
 * The button POSTs the token to the same procedure the REST route uses.
 */
export function mountPages(router: Router, deps: Deps): void {
  router.get('/verify-email', (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    if (!token) return page(ctx, 400, 'Link incomplete', '<p>This confirmation link has no token. Open the link from the e-mail again.</p>');
    page(
      ctx,
      200,
      'Confirm your e-mail address',
      `<p>Press the button to confirm your e-mail address.</p>
<form method="post" action="/verify-email"><input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">Confirm e-mail address</button></form>`,
    );
  });

  router.post('/verify-email', koaBody({ json: false, text: false, multipart: false, urlencoded: true, formLimit: '4kb' }), async (ctx) => {
    const form = ctx.request.body as Record<string, unknown> | undefined;
    const token = typeof form?.token === 'string' ? form.token : '';
    const caller = createCaller(createContextInner(deps, {}, { ip: ctx.ip, requestId: ctx.state.requestId }));
    try {
      const result = await caller.auth.verifyEmail({ token });
      page(ctx, 200, 'E-mail address confirmed', `<p>${escapeHtml(result.message)}</p>`);
    } catch (error) {
      if (!(error instanceof TRPCError) || error.code !== 'BAD_REQUEST') throw error;
      page(ctx, 400, 'Link no longer valid', '<p>This link is unknown, already used or expired. Request a new one from the sign-in screen.</p>');
    }
  });
}
