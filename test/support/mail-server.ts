/**
 * A real SMTP peer for tests (smtp-server): keeps every message it receives, with the envelope's
 * recipients and the raw text (quoted-printable soft breaks and escapes undone).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  text: string;
}

export interface MailServer {
  port: number;
  /** `smtp://127.0.0.1:<port>`: SMTP_URL for the server under test. */
  url: string;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

export async function startMailServer(): Promise<MailServer> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const text = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
        mails.push({ to: session.envelope.rcptTo.map((address) => address.address), text });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
