/**
 * Mail that leaves: invitations and set-password links sent through SMTP with nodemailer when
 * `SMTP_URL` is set (from `SMTP_FROM`); without SMTP the message is written to the log instead, so an
 * operator can still pass the link on by hand.
 */
import { createTransport, type Transporter } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The link the message carries, logged when no SMTP server is configured. */
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
        log.info({ to: message.to, subject: message.subject, link: message.link }, 'mail not sent (no SMTP_URL): pass the link on by hand');
        return 'logged';
      },
      close() {},
    };
  }
  // Bounded waits: an SMTP server that never answers must not hold a dashboard request for minutes.
  const transport: Transporter = createTransport({
    url: smtp.url,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    async send(message) {
      try {
        await transport.sendMail({ from: smtp.from, to: message.to, subject: message.subject, text: message.text });
      } catch (error) {
        log.error({ err: error, to: message.to, subject: message.subject }, 'mail could not be sent');
        throw error;
      }
      return 'sent';
    },
    close() {
      transport.close();
    },
  };
}
