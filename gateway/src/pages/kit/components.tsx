import type { ComponentChildren } from 'preact';
import { CSRF_FIELD } from './csrf.ts';
import type { ProviderLink } from './provider-links.view.tsx';

/** What a form shows again after a refusal: the values typed (never passwords) and a message per field. */
export type FormState = { values?: Record<string, string>; errors?: Record<string, string> };

type FormProps = {
  action: string;
  csrf: string;
  /** WebAuthn options (JSON) for the passkey button of this form; an attribute value, so escaped like any. */
  options?: string;
  children: ComponentChildren;
};

/** Every POST form: its CSRF token first, so no form can be written without one. */
export function Form({ action, csrf, options, children }: FormProps) {
  return (
    <form method="post" action={action} data-options={options}>
      <Hidden name={CSRF_FIELD} value={csrf} />
      {children}
    </form>
  );
}

export function Hidden({ name, value }: { name: string; value: string }) {
  return <input type="hidden" name={name} value={value} />;
}

export type FieldProps = {
  name: string;
  label: string;
  form?: FormState;
  /** Tells apart fields of the same name in several forms of one page. */
  idPrefix?: string;
  type?: 'text' | 'email' | 'password';
  autoComplete: string;
  hint?: string;
  required?: boolean;
  minLength?: number;
  /** The keyboard a phone shows: digits for a code from an authenticator app. */
  inputMode?: 'numeric';
  /** Only where the browser must hold the limit itself (a passkey's name, checked before the passkey is made). */
  maxLength?: number;
};

/**
 * A labelled input; its error (if any) under it, tied to it for screen readers. No maxlength:
 * a browser would cut a pasted password short without a word, and the server says what is
 * too long. An e-mail field is text with an e-mail keyboard: the browser's own e-mail check
 * refuses addresses the API accepts (a non-ASCII local part).
 */
export function Field({ name, label, form, idPrefix, type = 'text', autoComplete, hint, required = true, minLength, inputMode, maxLength }: FieldProps) {
  const id = idPrefix ? `${idPrefix}-${name}` : name;
  const error = form?.errors?.[name];
  // A password is never written back into a page.
  const value = type === 'password' ? undefined : form?.values?.[name];
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type === 'email' ? 'text' : type}
        inputMode={type === 'email' ? 'email' : inputMode}
        autoCapitalize={type === 'email' ? 'none' : undefined}
        spellcheck={type === 'email' ? false : undefined}
        value={value}
        autoComplete={autoComplete}
        required={required}
        minLength={minLength}
        maxLength={maxLength}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

type Option = { value: string; label: string };

export function SelectField({ name, label, options, idPrefix }: { name: string; label: string; options: Option[]; idPrefix?: string }) {
  const id = idPrefix ? `${idPrefix}-${name}` : name;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name}>
        {options.map((option) => (
          <option value={option.value}>{option.label}</option>
        ))}
      </select>
    </div>
  );
}

type ButtonProps = { children: ComponentChildren; variant?: 'primary' | 'secondary' | 'danger' | 'link'; size?: 'small'; block?: boolean };

export function Button({ children, variant = 'primary', size, block }: ButtonProps) {
  const classes = ['button', variant !== 'primary' && `button-${variant}`, size && `button-${size}`, block && 'button-block'];
  return (
    <button type="submit" class={classes.filter(Boolean).join(' ')}>
      {children}
    </button>
  );
}

export function Actions({ children }: { children: ComponentChildren }) {
  return <div class="actions">{children}</div>;
}

export type Tone = 'info' | 'success' | 'warning' | 'error';

/** A message about the page as a whole; errors are announced to screen readers at once. */
export function Alert({ tone = 'info', title, children }: { tone?: Tone; title?: string; children?: ComponentChildren }) {
  return (
    <div class={tone === 'info' ? 'alert' : `alert alert-${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {title && <p class="alert-title">{title}</p>}
      {children}
    </div>
  );
}

export function Card({ title, children, danger, wide, id }: { title?: string; children: ComponentChildren; danger?: boolean; wide?: boolean; id?: string }) {
  const classes = ['card', danger && 'card-danger', wide && 'span-2'].filter(Boolean).join(' ');
  return (
    <section class={classes} id={id} aria-labelledby={title && id ? `${id}-title` : undefined}>
      {title && <h2 id={id ? `${id}-title` : undefined}>{title}</h2>}
      {children}
    </section>
  );
}

/** A page-wide message from a handler: a refusal, or what just happened. */
export type Notice = { tone: Tone; title?: string; text: string };

/** What a page with one form is shown with: its CSRF token, the form as refused (values, errors), a notice, provider links. */
export type FormPageProps = { csrf: string; form?: FormState; notice?: Notice; providers?: ProviderLink[] };

export function NoticeBox({ notice }: { notice?: Notice }) {
  if (!notice) return null;
  return (
    <Alert tone={notice.tone} title={notice.title}>
      <p>{notice.text}</p>
    </Alert>
  );
}
