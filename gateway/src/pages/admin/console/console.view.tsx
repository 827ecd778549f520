import type { ComponentChildren } from 'preact';
import { Actions, Alert, Button, Card, Field, Form, Hidden, NoticeBox, type Notice } from '../../kit/components.tsx';
import { Layout, type Viewer } from '../../kit/layout.tsx';
import { CODE_LABEL } from '../../kit/second-factor.view.tsx';
import { deviceName, formatInstant } from '../../kit/wording.ts';

/** What the console's views need of the admin: the top bar, the forms' token, whether a change needs a code. */
export type OperatorView = { email: string; csrf: string; needsCode: boolean; recoveryOnly: boolean };

const SECTIONS = [
  { href: '/admin', label: 'Overview' },
  { href: '/admin/accounts', label: 'Accounts' },
  { href: '/admin/inbox', label: 'Inbox' },
  { href: '/admin/events', label: 'Events out' },
  { href: '/admin/audit', label: 'Audit' },
] as const;

type ConsoleLayoutProps = {
  title: string;
  operator: OperatorView;
  section: (typeof SECTIONS)[number]['href'];
  notice?: Notice;
  /** The page has actions: when the session's step-up is over, it offers to give the code once, up front. */
  actions?: boolean;
  /** This page's own address, where the step-up box brings the admin back to. */
  path?: string;
  children: ComponentChildren;
};

/** The second factor's code a console form asks for: a recovery code for an admin with passkeys only, since the console runs no script. */
function CodeField({ operator, idPrefix, error }: { operator: OperatorView; idPrefix: string; error?: string }) {
  return (
    <Field
      name="code"
      label={operator.recoveryOnly ? 'Recovery code' : CODE_LABEL}
      idPrefix={idPrefix}
      autoComplete="one-time-code"
      inputMode={operator.recoveryOnly ? undefined : 'numeric'}
      form={error ? { errors: { code: error } } : undefined}
    />
  );
}

/** A list's filter buttons: apply, and back to the unfiltered list; `children` adds more (a download). */
export function FilterActions({ clearHref, children }: { clearHref: string; children?: ComponentChildren }) {
  return (
    <Actions>
      <Button variant="secondary">Filter</Button>
      <a class="button button-link" href={clearHref}>
        Clear
      </a>
      {children}
    </Actions>
  );
}

/**
 * Asks for the code once for the page's actions, when the session's five minutes of step-up
 * are over (an action sent without it asks on a page of its own instead).
 */
export function StepUpBox({ operator, back, error }: { operator: OperatorView; back: string; error?: string }) {
  return (
    <div class="stepup" id="step-up">
      <p class="stepup-text">
        <strong>Changes need your second factor.</strong> Give a code once; it covers every change for 5 minutes.
      </p>
      <Form action="/admin/step-up" csrf={operator.csrf}>
        <Hidden name="back" value={back} />
        <div class="stepup-row">
          <CodeField operator={operator} idPrefix="step-up" error={error} />
          <Button variant="secondary">Confirm it is me</Button>
        </div>
      </Form>
    </div>
  );
}

/** Every console page: the site's frame, wide, with the console's sections and the page's notice. */
export function ConsoleLayout({ title, operator, section, notice, actions, path, children }: ConsoleLayoutProps) {
  return (
    <Layout title={`${title} · Console`} viewer={operator} wide>
      <nav class="console-nav" aria-label="Console">
        {SECTIONS.map((item) => (
          <a href={item.href} aria-current={item.href === section ? 'page' : undefined}>
            {item.label}
          </a>
        ))}
      </nav>
      <h1>{title}</h1>
      <NoticeBox notice={notice} />
      {actions && operator.needsCode && <StepUpBox operator={operator} back={path ?? section} />}
      {children}
    </Layout>
  );
}

/** The console section a path belongs to: where a refused request sends its reader back to. */
export function sectionOf(path: string): (typeof SECTIONS)[number]['href'] {
  return SECTIONS.slice(1).find((section) => path === section.href || path.startsWith(`${section.href}/`))?.href ?? '/admin';
}

/** A console request refused as a whole: a filter or field that could not be used, or nothing by that id. */
export function ConsoleProblemPage({ operator, code, issues, back }: { operator: OperatorView; code: 'VALIDATION_FAILED' | 'NOT_FOUND'; issues: string[]; back: ReturnType<typeof sectionOf> }) {
  const notFound = code === 'NOT_FOUND';
  return (
    <ConsoleLayout title={notFound ? 'Not found' : 'Request not understood'} operator={operator} section={back}>
      <Card>
        <Alert tone="error" title={notFound ? 'There is nothing by that id.' : 'Part of the request could not be used. Nothing was changed.'}>
          {issues.length > 0 && (
            <ul>
              {issues.map((issue) => (
                <li>{issue}</li>
              ))}
            </ul>
          )}
        </Alert>
        <a class="button button-secondary" href={back}>
          {`Back to ${SECTIONS.find((section) => section.href === back)?.label ?? 'the console'}`}
        </a>
      </Card>
    </ConsoleLayout>
  );
}

/** An instant as the console shows every one: in UTC, machine-readable in `datetime`. */
export function Time({ at, empty = '–' }: { at: string | null | undefined; empty?: string }) {
  if (!at) return <span class="muted">{empty}</span>;
  return <time dateTime={new Date(at).toISOString()}>{formatInstant(at)}</time>;
}

/** An age in seconds, as a person reads it: "4 min", "2 h 5 min". */
export function age(seconds: number | null): string {
  if (seconds === null) return 'none waiting';
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}

/** A table that scrolls sideways on a narrow screen instead of breaking the page; its caption names it. */
export function Table({ caption, head, children, empty }: { caption: string; head: Array<string | { label: string; num: true }>; children: ComponentChildren[]; empty: string }) {
  return (
    <div class="table-wrap">
      <table class="table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {head.map((column) =>
              typeof column === 'string' ? (
                <th scope="col">{column}</th>
              ) : (
                <th scope="col" class="num">
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
          {children.length ? (
            children
          ) : (
            <tr>
              <td class="empty" colSpan={head.length}>
                {empty}
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Paging by cursor, as the procedures page: the next page's link (the query of this page with
 * the cursor the list gave out), and back to the first. Lists page forward only.
 */
export function Pager({ path, query, nextCursor, paged }: { path: string; query: Record<string, string | undefined>; nextCursor: string | null; paged: boolean }) {
  const href = (cursor?: string) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
    if (cursor) params.set('cursor', cursor);
    const text = params.toString();
    return text ? `${path}?${text}` : path;
  };
  if (!paged && !nextCursor) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {paged ? <a href={href()}>First page</a> : <span />}
      {nextCursor ? (
        <a href={href(nextCursor)} rel="next">
          Next page
        </a>
      ) : (
        <span class="muted">Last page</span>
      )}
    </nav>
  );
}

export type Option = { value: string; label: string };

/** A labelled select showing the value chosen; the first option is "any". */
export function Select({ name, label, options, value, idPrefix, error }: { name: string; label: string; options: Option[]; value?: string; idPrefix?: string; error?: string }) {
  const id = idPrefix ? `${idPrefix}-${name}` : name;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name} aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : undefined}>
        {options.map((option) => (
          <option value={option.value} selected={option.value === (value ?? '')}>
            {option.label}
          </option>
        ))}
      </select>
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** A table's column of numbers: its heading right-aligned over them. */
export const num = (label: string) => ({ label, num: true as const });

/** The options of a filter: "any" first, then each value as it is named. */
export const anyOf = (values: readonly string[], any = 'Any'): Option[] => [{ value: '', label: any }, ...values.map((value) => ({ value, label: value }))];

/** A form of one button (and the code, when one is needed) acting on one thing. */
export function ActionForm({
  action,
  operator,
  label,
  variant = 'secondary',
  fields = {},
  children,
}: {
  action: string;
  operator: OperatorView;
  label: string;
  variant?: 'primary' | 'secondary' | 'danger';
  fields?: Record<string, string>;
  children?: ComponentChildren;
}) {
  return (
    <Form action={action} csrf={operator.csrf}>
      {Object.entries(fields).map(([name, value]) => (
        <Hidden name={name} value={value} />
      ))}
      {children}
      <Actions>
        <Button variant={variant} size="small">
          {label}
        </Button>
      </Actions>
    </Form>
  );
}

/** A change about to be made, told in words: what asks for the code, or what is about to be removed. */
export type Confirmation = {
  title: string;
  text: string;
  button: string;
  danger?: boolean;
  action: string;
  fields: Record<string, string>;
  back: { href: string; label: string };
};

/**
 * A change that waits for a word from the admin: the code of the second factor (the session's
 * five minutes are over, or the code given was wrong, its error under the field), or a
 * confirmation before something is removed. The form's fields come again as hidden fields.
 */
export function ConfirmPage({ viewer, operator, confirmation, codeError }: { viewer: Viewer; operator: OperatorView; confirmation: Confirmation; codeError?: string }) {
  return (
    <Layout title={confirmation.title} viewer={viewer}>
      <div class={confirmation.danger ? 'card card-danger' : 'card'}>
        <h1>{confirmation.title}</h1>
        <p>{confirmation.text}</p>
        <Form action={confirmation.action} csrf={operator.csrf}>
          {Object.entries(confirmation.fields).map(([name, value]) => (
            <Hidden name={name} value={value} />
          ))}
          {operator.needsCode && <CodeField operator={operator} idPrefix="confirm" error={codeError} />}
          <Actions>
            <Button variant={confirmation.danger ? 'danger' : 'primary'}>{confirmation.button}</Button>
            <a class="button button-secondary" href={confirmation.back.href}>
              {confirmation.back.label}
            </a>
          </Actions>
        </Form>
      </div>
    </Layout>
  );
}

/** A signed-in account that is not an admin. */
export function NotAdminPage({ viewer }: { viewer: Viewer }) {
  return (
    <Layout title="For administrators only" viewer={viewer}>
      <div class="card">
        <h1>For administrators only</h1>
        <p>The console is for accounts with the admin role, and yours is not one. Nothing was shown or changed.</p>
        <a class="button button-secondary" href="/account">
          Go to your account
        </a>
      </div>
    </Layout>
  );
}

/** An admin whose role needs a second factor (MFA_REQUIRED_ROLES) that has none yet: only the way to one. */
export function MfaFirstPage({ viewer }: { viewer: Viewer }) {
  return (
    <Layout title="Set up a second factor first" viewer={viewer?.email ? viewer : undefined}>
      <div class="card">
        <h1>Set up a second factor first</h1>
        <Alert tone="warning">
          <p>Administrators of this service must sign in with a second factor. Until yours is set up, the console shows nothing and changes nothing.</p>
        </Alert>
        <p>Turn on an authenticator app or add a passkey on your account page, then come back.</p>
        <a class="button" href="/account#mfa">
          Set up a second factor
        </a>
      </div>
    </Layout>
  );
}

/** A device by its short name; the user agent in full, as text, one click away. */
export function UserAgent({ value }: { value: string | null }) {
  if (!value) return <span class="muted">–</span>;
  return (
    <details class="ua">
      <summary>{deviceName(value)}</summary>
      <span class="row-meta">{value}</span>
    </details>
  );
}

/** A fact shown big, with its name under it. */
export function Stat({ label, value, note }: { label: string; value: number | string; note?: string }) {
  return (
    <div class="stat">
      <div class="stat-value">{typeof value === 'number' ? value.toLocaleString('en-GB') : value}</div>
      <div class="stat-label">{label}</div>
      {note && <div class="stat-note">{note}</div>}
    </div>
  );
}

/** A state as a badge: the word is the meaning, the colour only repeats it. */
export function StateBadge({ state }: { state: string }) {
  const tone = ['processed', 'delivered', 'enabled'].includes(state)
    ? 'badge badge-good'
    : ['dead', 'disabled'].includes(state)
      ? 'badge badge-bad'
      : ['received', 'pending'].includes(state)
        ? 'badge badge-accent'
        : 'badge';
  return <span class={tone}>{state}</span>;
}
