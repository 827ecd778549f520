import type { Mail } from '../../lib/mailer.ts';
import { escapeHtml } from '../../lib/text.ts';

function layout(title: string, paragraphs: string[], link?: { url: string; label: string }): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const button = link
    ? `<p><a href="${escapeHtml(link.url)}" style="display:inline-block;padding:10px 18px;background:#1d4ed8;color:#fff;text-decoration:none;border-radius:6px">${escapeHtml(link.label)}</a></p>
       <p style="color:#555;font-size:13px">Or open this link: ${escapeHtml(link.url)}</p>`
    : '';
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif;max-width:560px;margin:auto">
<h2>${escapeHtml(title)}</h2>
${body}
${button}
</body></html>`;
}

export function verificationMail(to: string, name: string, verifyUrl: string): Mail {
  const intro = [`Hello ${name},`, 'Please confirm your e-mail address to finish setting up your Gatehouse account. The link is valid for 24 hours.'];
  return {
    to,
    subject: 'Confirm your e-mail address',
    text: `${intro.join('\n\n')}\n\n${verifyUrl}\n\nIf you did not sign up, ignore this message.`,
    html: layout('Confirm your e-mail address', [...intro, 'If you did not sign up, ignore this message.'], {
      url: verifyUrl,
      label: 'Confirm e-mail address',
    }),
  };
}

export function alreadyRegisteredMail(to: string, name: string, loginUrl: string): Mail {
  const paragraphs = [
    `Hello ${name},`,
    'Someone tried to create a Gatehouse account with this e-mail address, which already has an account. Nothing about your account has changed.',
    'If it was you, just log in. If it was not, you can ignore this message.',
  ];
  return {
    to,
    subject: 'Someone tried to register with your e-mail address',
    text: `${paragraphs.join('\n\n')}\n\n${loginUrl}`,
    html: layout('Registration attempt', paragraphs, { url: loginUrl, label: 'Log in' }),
  };
}
