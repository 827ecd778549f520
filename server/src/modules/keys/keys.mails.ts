import type { Mail } from '../../lib/mailer.ts';
import { composeMail, NOT_YOU } from '../../lib/mail-template.ts';

export function apiKeyRotatedNotice(to: string, name: string, previousUntil: Date | undefined): Mail {
  const previous = previousUntil
    ? `The previous key keeps working until ${previousUntil.toISOString()}; after that only the new one does.`
    : 'The previous key stopped working at once.';
  return composeMail({
    to,
    subject: 'Your Gatehouse API key was replaced',
    title: 'Your API key was replaced',
    paragraphs: [`Hello ${name},`, 'A new API key was made for your Gatehouse account.', previous, NOT_YOU],
  });
}
