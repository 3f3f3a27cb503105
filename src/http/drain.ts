// Closing an HTTP server without cutting off a request. Node's `server.close()` destroys every idle
// keep-alive connection at once, which races a client sending its next request on one: that request
// is lost (the client sees a reset). Instead the listener stops first and every connection ends on
// its own after an answer carrying `Connection: close` (the server's hooks add it while closing).
// A connection is closed by the server only once it has been quiet for a while (a client still
// sending on it would have sent by then), and at the limit whatever remains is cut.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";
import { setImmediate as afterPoll, setTimeout as sleep } from "node:timers/promises";

/**
 * How long a connection must have been quiet (no request in flight, none answered) to be closed.
 * Closing one races a client that sends on it at that moment, and a client busy elsewhere (a
 * loaded host, a long GC) can take well over half a second between an answer and its next request:
 * two seconds makes the race rare while leaving most of the drain limit to requests in flight.
 */
const QUIET_MS = 2_000;
/** How long requests in flight may take before their connections are cut. */
const DRAIN_LIMIT_MS = 8_000;

interface Activity {
  inFlight: number;
  /** When the connection opened or last finished an answer. */
  lastActive: number;
}

/** Tracks a server's connections so that `drain` can wait for each to end. */
export class ConnectionDrain {
  private readonly sockets = new Map<Socket, Activity>();

  constructor(private readonly server: Server) {
    server.on("connection", (socket: Socket) => {
      this.sockets.set(socket, { inFlight: 0, lastActive: Date.now() });
      socket.once("close", () => this.sockets.delete(socket));
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const activity = this.sockets.get(req.socket);
      if (!activity) return;
      activity.inFlight++;
      res.once("close", () => {
        activity.inFlight--;
        activity.lastActive = Date.now();
      });
    });
  }

  /** Stops accepting connections and resolves once every open one has ended. */
  async drain(): Promise<void> {
    // net's close, not http's: http's would also destroy idle connections right away.
    if (this.server.listening) NetServer.prototype.close.call(this.server);
    const started = Date.now();
    while (this.sockets.size > 0) {
      await sleep(10);
      // A timer can fire right after a stall of this process, before the requests that arrived
      // meanwhile are read: letting the poll phase run first counts them as in flight, not quiet.
      await afterPoll();
      const now = Date.now();
      if (now - started >= DRAIN_LIMIT_MS) this.server.closeAllConnections();
      for (const [socket, { inFlight, lastActive }] of this.sockets) {
        if (inFlight === 0 && now - lastActive >= QUIET_MS) socket.destroy();
      }
    }
  }
}
