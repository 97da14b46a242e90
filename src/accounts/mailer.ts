/**
 * Mail that leaves: invitations and set-password links sent through SMTP with nodemailer when
 * `SMTP_URL` is set (from `SMTP_FROM`). Without SMTP nothing is sent and only the fact is logged
 * (recipient and subject, never the link: whoever asked for the link is shown it once instead). The
 * recipient is handed to nodemailer as a parsed address object, so it is mailed exactly the plain
 * address the checks accepted (email-address.ts), never re-read as an address list. nodemailer is
 * loaded only when SMTP is configured (it is the heaviest import of the dashboard's modules).
 */
import type { Transporter } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The link the message carries: never logged (whoever asked is shown it once). */
  link?: string;
}

export interface MailLog {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface Mailer {
  /** `sent` when an SMTP server accepted the message, `logged` without SMTP. Throws when SMTP refuses. */
  send(message: MailMessage): Promise<'sent' | 'logged'>;
  close(): void;
}

export function createMailer(smtp: { url?: string | undefined; from: string }, log: MailLog): Mailer {
  if (smtp.url === undefined) {
    return {
      async send(message) {
        log.info(
          { to: message.to, subject: message.subject },
          'mail not sent (no SMTP_URL): the link was shown once to whoever asked for it, to pass on by hand',
        );
        return 'logged';
      },
      close() {},
    };
  }
  // Bounded waits: an SMTP server that never answers must not hold a dashboard request for minutes.
  const url = smtp.url;
  const transport: Promise<Transporter> = import('nodemailer').then(({ createTransport }) =>
    createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 }),
  );
  return {
    async send(message) {
      try {
        await (
          await transport
        ).sendMail({ from: smtp.from, to: { name: '', address: message.to }, subject: message.subject, text: message.text });
      } catch (error) {
        log.error({ err: error, to: message.to, subject: message.subject }, 'mail could not be sent');
        throw error;
      }
      return 'sent';
    },
    close() {
      void transport.then((opened) => opened.close());
    },
  };
}
