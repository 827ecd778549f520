import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { PATIENCE_MS } from './wait.ts';

/** `envelopeTo`: the RCPT TO addresses, where the mail really goes (the To header may say otherwise). */
export type ReceivedMail = { to: string; envelopeTo: string[]; subject: string; text: string; html: string; raw: ParsedMail };

/** A real SMTP server in-process: the service sends over the wire, tests read what arrived. */
export async function startSmtpServer() {
  const inbox: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (raw) => {
          const to = [raw.to].flat().flatMap((address) => address?.value ?? []).map((v) => v.address ?? '').join(',');
          const envelopeTo = session.envelope.rcptTo.map((recipient) => recipient.address);
          inbox.push({ to, envelopeTo, subject: raw.subject ?? '', text: raw.text ?? '', html: typeof raw.html === 'string' ? raw.html : '', raw });
          for (const wake of waiters) wake();
          callback();
        },
        (error) => callback(error),
      );
    },
  });
  // A client killed with its connection open (a SIGKILLed service's pooled mailer) resets it:
  // that is the client's end, not a failure of the mail server under test.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET') throw error;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    inbox,
    /** The first mail to `to` (after `since` mails already seen) that matches, or a timeout error. */
    async waitFor(to: string, match: (mail: ReceivedMail) => boolean = () => true, timeoutMs = PATIENCE_MS): Promise<ReceivedMail> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = inbox.find((mail) => mail.to === to && match(mail));
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, left);
          waiters.add(wake);
        });
      }
    },
    mailsTo: (to: string) => inbox.filter((mail) => mail.to === to),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type SmtpServer = Awaited<ReturnType<typeof startSmtpServer>>;

/** The token of the `{PUBLIC_URL}<page>?token=…` link in a mail: the verification link unless told. */
export function linkToken(mail: ReceivedMail, page = '/verify-email'): string {
  const match = new RegExp(`${page}\\?token=([\\w-]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${page} link in mail "${mail.subject}"`);
  return match[1];
}
