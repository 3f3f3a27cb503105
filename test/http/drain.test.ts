// ConnectionDrain closes a kept-alive connection only once it has been quiet. "Quiet" must mean
// quiet as seen by a server that could read: after a stall of its own (a long GC, a starved CPU) a
// request that arrived meanwhile still sits unread in the socket, and closing then resets it.
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { ConnectionDrain } from "../../src/http/drain.js";

let server: Server | undefined;
afterEach(() => server?.closeAllConnections());

const REQUEST = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n";

/** Resolves with the next chunk `socket` reads, or with the error that ends it. */
function nextRead(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const done = (outcome: string) => {
      socket.off("data", onData).off("error", onError).off("end", onEnd);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => done(chunk.toString("latin1"));
    const onError = (e: NodeJS.ErrnoException) => done(e.code ?? String(e));
    const onEnd = () => done("end");
    socket.on("data", onData).on("error", onError).on("end", onEnd);
  });
}

/** A server with its drain, and a client whose first request was answered on a connection kept alive. */
async function keptAliveClient(): Promise<{ drain: ConnectionDrain; client: Socket }> {
  server = createServer((_req, res) => res.end("ok"));
  const drain = new ConnectionDrain(server);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
  await new Promise((resolve) => client.once("connect", resolve));
  client.write(REQUEST);
  expect(await nextRead(client)).toMatch(/^HTTP\/1\.1 200/);
  return { drain, client };
}

it("answers a request that arrived while the server stalled past the quiet period, instead of resetting its connection", async () => {
  const { drain, client } = await keptAliveClient();

  const drained = drain.drain();
  const answer = nextRead(client);
  // The next request is on the wire, then the whole process stalls for longer than the quiet period.
  client.write(REQUEST);
  const until = Date.now() + 2_500;
  while (Date.now() < until);
  expect(await answer).toMatch(/^HTTP\/1\.1 200/);
  client.end();
  await drained;
}, 15_000);

it("closes a connection nobody sends on once it has been quiet, well before the drain limit", async () => {
  const { drain, client } = await keptAliveClient();

  const started = Date.now();
  const closed = nextRead(client);
  await drain.drain();
  expect(await closed).toBe("end");
  expect(Date.now() - started).toBeLessThan(4_000);
}, 15_000);
