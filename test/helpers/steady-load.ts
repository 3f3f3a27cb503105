// A steady stream of requests from a few keep-alive clients, for checking that a process shutting
// down under load cuts none off. Each lane is one client with one connection (as a load balancer's
// upstream connection is), so what happens to a request is what happens to that lane's connection.
import { Agent, get } from "node:http";

/**
 * The outcomes that lose nothing: an answer (200; 429 once the key's read budget is spent; 503
 * "shutting down: retry" for a request that reached a closing process), or a connection refused
 * before anything was sent. A reset or a closed socket is a request cut off.
 */
export const ANSWERED_OR_REFUSED = ["200", "429", "503", "ECONNREFUSED"];

/** One GET on `agent`: its status, or the error's code. */
function send(url: string, headers: Record<string, string>, agent: Agent): Promise<string> {
  return new Promise((resolve) => {
    get(url, { headers, agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(String(res.statusCode)));
      res.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? String(e)));
    }).on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? String(e)));
  });
}

/** Keeps `lanes` requests going to `url` until stopped, counting each outcome: a status, or the error's code. */
export function steadyLoad(url: string, headers: Record<string, string>, lanes = 8) {
  const outcomes = new Map<string, number>();
  let running = true;
  const done = Promise.all(
    Array.from({ length: lanes }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (running) {
        const outcome = await send(url, headers, agent);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        // Refused: the process no longer listens; this lane is done.
        if (outcome === "ECONNREFUSED") break;
      }
      agent.destroy();
    }),
  );
  return {
    outcomes,
    /** Stops sending and resolves once every lane's last request has its outcome. */
    async stop() {
      running = false;
      await done;
    },
  };
}
