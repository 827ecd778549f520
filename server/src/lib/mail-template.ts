import type { Mail } from './mailer.ts';
import { escapeHtml } from './text.ts';

export type MailParts = {
  to: string;
  /** Never a secret: subjects show in notifications and inbox lists. */
  subject: string;
  title: string;
  paragraphs: string[];
  link?: { url: string; label: string };
  /** Paragraphs after the link. */
  after?: string[];
};

/** One shape for every mail: the same words as plain text and as simple, inline-styled HTML. */
export function composeMail({ to, subject, title, paragraphs, link, after = [] }: MailParts): Mail {
  const text = [...paragraphs, ...(link ? [link.url] : []), ...after].join('\n\n');
  const html = (lines: string[]) => lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n');
  const button = link
    ? `<p><a href="${escapeHtml(link.url)}" style="display:inline-block;padding:10px 18px;background:#1d4ed8;color:#fff;text-decoration:none;border-radius:6px">${escapeHtml(link.label)}</a></p>
       <p style="color:#555;font-size:13px">Or open this link: ${escapeHtml(link.url)}</p>`
    : '';
  return {
    to,
    subject,
    text,
    html: `<!doctype html><html><body style="font-family:system-ui,sans-serif;max-width:560px;margin:auto">
<h2>${escapeHtml(title)}</h2>
${html(paragraphs)}
${button}
${html(after)}
</body></html>`,
  };
}

/** The advice of every notice of a change the owner may not have made. */
export const NOT_YOU = 'If it was not you, reset your password now and sign out everywhere else from your account page.';
