// An SMTP server on 127.0.0.1 for tests (the `smtp-server` package): accepts any login, parses every
// message it accepts (mailparser), and answers as the test says (4xx or 5xx to the next messages).
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** One message the server accepted. */
export interface SmtpMessage {
  /** The envelope: MAIL FROM and RCPT TO. */
  from: string;
  to: string[];
  /** The login the client used, if any. */
  user: string | null;
  raw: Buffer;
  parsed: ParsedMail;
}

export interface TestSmtp {
  /** smtp://127.0.0.1:<port> (add user:pass@ to log in: any login is accepted). */
  url: string;
  port: number;
  messages: SmtpMessage[];
  /** Messages answered with an error so far (not in `messages`). */
  refused: number;
  /** Answers the next `count` messages `<code> <text>` (4xx: try later; 5xx: refused) instead of accepting them. */
  failNext(count: number, code: number, text?: string): void;
  /** Resolves with the messages once `n` have been accepted. */
  waitForCount(n: number, timeoutMs?: number): Promise<SmtpMessage[]>;
  stop(): Promise<void>;
}

/** Starts a test SMTP server on a free loopback port. */
export async function startSmtp(): Promise<TestSmtp> {
  const messages: SmtpMessage[] = [];
  const failures: { code: number; text: string }[] = [];
  const state = { refused: 0 };
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS (its self-signed certificate would fail the client's check).
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const failure = failures.shift();
        if (failure) {
          state.refused++;
          return callback(Object.assign(new Error(failure.text), { responseCode: failure.code }));
        }
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            messages.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              to: session.envelope.rcptTo.map((r) => r.address),
              user: typeof session.user === "string" ? session.user : null,
              raw,
              parsed,
            });
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    get refused() {
      return state.refused;
    },
    failNext(count, code, text = code >= 500 ? "5.7.1 Message refused by the test server" : "4.3.0 Try again later") {
      for (let i = 0; i < count; i++) failures.push({ code, text });
    },
    async waitForCount(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < n) {
        if (Date.now() > deadline) throw new Error(`the SMTP server got ${messages.length} of ${n} messages`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return messages;
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
