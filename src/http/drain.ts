// Closing an HTTP server without cutting off a request. Node's `server.close()` destroys idle
// keep-alive connections at once, which races a client sending its next request on one: that request
// is lost (the client sees a reset). Instead the listener stops first, every connection ends on its
// own after an answer carrying `Connection: close` (the server's hooks add it while closing), those
// still idle after a short grace are closed, and only at the limit is anything in flight cut.
import type { Server } from "node:http";
import { Server as NetServer, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** How long an idle keep-alive connection may still bring a request before it is closed. */
const IDLE_GRACE_MS = 250;
/** How long requests in flight may take before their connections are cut. */
const DRAIN_LIMIT_MS = 8_000;

/** Tracks a server's connections so that `drain` can wait for each to end. */
export class ConnectionDrain {
  private readonly sockets = new Set<Socket>();

  constructor(private readonly server: Server) {
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
  }

  /** Stops accepting connections and resolves once every open one has ended. */
  async drain(): Promise<void> {
    // net's close, not http's: http's would also destroy idle connections right away.
    if (this.server.listening) NetServer.prototype.close.call(this.server);
    const started = Date.now();
    while (this.sockets.size > 0) {
      const waited = Date.now() - started;
      if (waited >= DRAIN_LIMIT_MS) this.server.closeAllConnections();
      else if (waited >= IDLE_GRACE_MS) this.server.closeIdleConnections();
      await sleep(10);
    }
  }
}
