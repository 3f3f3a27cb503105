// A webhook receiver on 127.0.0.1 for tests: records every request and answers as the test says.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver got. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How to answer the next requests (default 200); `hang` never answers. */
  respond(handler: (req: Received, res: ServerResponse) => void): void;
  /** Resolves once `n` requests have arrived. */
  waitForCount(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver on a free loopback port; `path` is appended to its URL. */
export async function startReceiver(path = "/hooks"): Promise<Receiver> {
  const received: Received[] = [];
  let handler: (req: Received, res: ServerResponse) => void = (_req, res) => void res.writeHead(200).end("ok");
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const r: Received = { headers: req.headers as Record<string, string>, body, at: Date.now() };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    respond: (h) => void (handler = h),
    async waitForCount(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${n} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
