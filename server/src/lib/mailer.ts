import nodemailer from 'nodemailer';
import type { Logger } from './logger.ts';

export type Mail = { to: string; subject: string; text: string; html: string };

export interface Mailer {
  /** Sends and waits: for the worker, where a failure should fail the job so it is tried again. */
  send(mail: Mail): Promise<void>;
  /**
   * Sends without making the caller wait, so an answer takes the same time whether or not a
   * mail goes out (enumeration safety). Failures are logged; `close` waits for what is pending.
   */
  sendInBackground(mail: Mail): void;
  close(): Promise<void>;
}

type Transport = { send(mail: Mail): Promise<void>; close(): void };

function withBackgroundSending(transport: Transport, logger: Logger): Mailer {
  const pending = new Set<Promise<void>>();
  return {
    send: (mail) => transport.send(mail),
    sendInBackground(mail) {
      const sending = transport
        .send(mail)
        .catch((error) => logger.error({ err: error, subject: mail.subject }, 'e-mail could not be sent'))
        .finally(() => pending.delete(sending));
      pending.add(sending);
    },
    async close() {
      await Promise.allSettled([...pending]);
      transport.close();
    },
  };
}

/**
 * Over SMTP when SMTP_URL is set. Without it the whole message goes to the log, so that a
 * newcomer running `npm start` can still click the verification link.
 */
export function createMailer(options: { smtpUrl: string | undefined; from: string; logger: Logger }): Mailer {
  const { smtpUrl, from, logger } = options;
  if (!smtpUrl) {
    const toLog: Transport = {
      async send(mail) {
        logger.info({ mail: { to: mail.to, subject: mail.subject, body: mail.text } }, 'e-mail (SMTP_URL not set, logged instead of sent)');
      },
      close() {},
    };
    return withBackgroundSending(toLog, logger);
  }
  const smtp = nodemailer.createTransport(smtpUrl);
  const overSmtp: Transport = {
    async send(mail) {
      // An address object, never a string nodemailer would parse: `a <b@c>` must not become b@c.
      await smtp.sendMail({ ...mail, from, to: { name: '', address: mail.to } });
    },
    close() {
      smtp.close();
    },
  };
  return withBackgroundSending(overSmtp, logger);
}
