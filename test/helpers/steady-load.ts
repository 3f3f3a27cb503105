// A steady stream of requests from a few keep-alive clients, for checking that a process shutting
// down under load cuts none off.

/**
 * The outcomes that lose nothing: an answer (200; 429 once the key's read budget is spent; 503
 * "shutting down: retry" for a request that reached a closing process), or a connection refused
 * before anything was sent. A reset or a closed socket is a request cut off.
 */
export const ANSWERED_OR_REFUSED = ["200", "429", "503", "ECONNREFUSED"];

/** Keeps `lanes` requests going to `url` until stopped, counting each outcome: a status, or the error's code. */
export function steadyLoad(url: string, headers: Record<string, string>, lanes = 8) {
  const outcomes = new Map<string, number>();
  const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  let running = true;
  const done = Promise.all(
    Array.from({ length: lanes }, async () => {
      while (running) {
        try {
          const res = await fetch(url, { headers });
          await res.arrayBuffer();
          count(String(res.status));
        } catch (e) {
          const code = (e as { cause?: { code?: string } }).cause?.code ?? String(e);
          count(code);
          // Refused: the process no longer listens; this lane is done.
          if (code === "ECONNREFUSED") return;
        }
      }
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
