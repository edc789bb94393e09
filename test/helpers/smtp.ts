/**
 * A real SMTP server on loopback for tests (the smtp-server package): every mail it accepts is
 * parsed (mailparser) and kept in `mails`. It can refuse mail (`refuse`: a 4xx or 5xx reply to
 * every recipient), be stopped (connections refused) and started again on the same port, as an
 * operator's SMTP server that goes away and comes back. Stopped at teardown.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { Test } from 'tap';

export type ReceivedMail = {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
};

export class TestSmtp {
  readonly mails: ReceivedMail[] = [];
  /** When set, every recipient is refused with this reply (421/451: try later; 550: never). */
  refuse: { code: number; message: string } | null = null;
  /** Recipients refused so far. */
  refused = 0;
  private server: SMTPServer | null = null;
  private port = 0;

  static async start(t: Test): Promise<TestSmtp> {
    const smtp = new TestSmtp();
    await smtp.listen();
    t.teardown(() => smtp.stop());
    return smtp;
  }

  /** The SMTP_URL a server under test is given. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The mails sent to one address, oldest first. */
  to(address: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.includes(address.toLowerCase()));
  }

  /** Starts listening (again, on the same port after `stop`). */
  async listen(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      // Stopping closes open connections at once (a client's pool keeps idle ones).
      closeTimeout: 50,
      onRcptTo: (address, _session, cb) => {
        if (this.refuse) {
          this.refused++;
          const err = new Error(this.refuse.message) as Error & { responseCode: number };
          err.responseCode = this.refuse.code;
          cb(err);
          return;
        }
        cb();
      },
      onData: (stream, session, cb) => {
        simpleParser(stream)
          .then((parsed) => {
            this.mails.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
            });
            cb();
          })
          .catch((err: Error) => cb(err));
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops accepting connections: deliveries fail until `listen` again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The first link in a mail's text that starts with `prefix` (a URL), or null. */
export function linkIn(mail: ReceivedMail, prefix: string): string | null {
  for (const m of mail.text.matchAll(/https?:\/\/\S+/g)) {
    if (m[0].startsWith(prefix)) return m[0];
  }
  return null;
}
