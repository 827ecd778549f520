import type { ComponentChildren } from 'preact';
import { pageAssets } from './assets.ts';
import { Form } from './components.tsx';

/** Who the top bar is for: a signed-in account (its address and a sign-out button) or anyone. */
export type Viewer = { email: string; csrf: string } | undefined;

type LayoutProps = {
  title: string;
  viewer?: Viewer;
  wide?: boolean;
  /** The page has passkey buttons: it loads their script (and its CSP then allows scripts of this site). */
  script?: boolean;
  children: ComponentChildren;
};

function Nav({ viewer }: { viewer: Viewer }) {
  if (!viewer) {
    return (
      <nav class="nav" aria-label="Account">
        <a href="/login">Sign in</a>
        <a href="/register">Create account</a>
      </nav>
    );
  }
  return (
    <nav class="nav" aria-label="Account">
      <span class="nav-who">{viewer.email}</span>
      <Form action="/logout" csrf={viewer.csrf}>
        <button type="submit" class="button button-secondary button-small">Sign out</button>
      </Form>
    </nav>
  );
}

/** The one frame every page has: document head, top bar, the page's content, footer. */
export function Layout({ title, viewer, wide, script, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{`${title} · Gatehouse`}</title>
        <link rel="stylesheet" href={pageAssets.stylesheet.href} />
        <link rel="icon" type="image/svg+xml" href={pageAssets.icon.href} />
        {script && <script src={pageAssets.webauthn.href} defer />}
        {script && <script src={pageAssets.passkeys.href} defer />}
      </head>
      <body>
        <header class="topbar">
          <div class="topbar-inner">
            <a class="brand" href={viewer ? '/account' : '/login'}>
              <img src={pageAssets.icon.href} alt="" width={24} height={24} />
              Gatehouse
            </a>
            <Nav viewer={viewer} />
          </div>
        </header>
        <main class={wide ? 'page page-wide' : 'page'}>{children}</main>
        <footer class="footer">Gatehouse account access</footer>
      </body>
    </html>
  );
}
