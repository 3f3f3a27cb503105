// Live connections per credential (an API key or a dashboard session), or per client address for
// callers without one: a WebSocket, or one SSE subscription (each is its own HTTP request). Caps them
// per holder, and closes those of a credential that ended (a key revoked or rolled past its end, a
// session signed out or idle), whichever process ended it.
import type { Prisma } from "../db/client.js";
import { AppError } from "../domain/errors.js";
import { SESSION_IDLE_MS } from "../domain/sessions.js";
import { every, type Periodic } from "../lib/periodic.js";
import type { Logger } from "pino";

/** Closes one live connection, saying why. */
export type CloseConnection = (reason: string) => void;

/** A registered connection; `release()` when it ends. */
export interface LiveConnection {
  release(): void;
}

/** The live connections of this process, by holder: a credential id (key_…, ses_…) or a client address. */
export class LiveConnections {
  private readonly byHolder = new Map<string, Set<CloseConnection>>();

  constructor(
    private readonly maxPerKey: number,
    /** Whose connections these are, for the limit's message: "this API key or session", "this address". */
    private readonly holder = "this API key or session",
  ) {}

  /** Registers a connection of `holder`; 429 `rate_limited` when it already has its maximum. */
  open(holder: string, close: CloseConnection): LiveConnection {
    let set = this.byHolder.get(holder);
    if (set && set.size >= this.maxPerKey) {
      throw new AppError("rate_limited", `Too many live connections for ${this.holder} (at most ${this.maxPerKey} per API process); close one first.`);
    }
    if (!set) this.byHolder.set(holder, (set = new Set()));
    set.add(close);
    // Idempotent: the transports may report an end more than once.
    return {
      release: () => {
        set.delete(close);
        if (set.size === 0 && this.byHolder.get(holder) === set) this.byHolder.delete(holder);
      },
    };
  }

  /** The holders with an open connection. */
  holders(): string[] {
    return [...this.byHolder.keys()];
  }

  /** Connections open in this process. */
  get size(): number {
    let n = 0;
    for (const set of this.byHolder.values()) n += set.size;
    return n;
  }

  /** Closes every connection of `holder`. */
  close(holder: string, reason: string): void {
    const set = this.byHolder.get(holder);
    this.byHolder.delete(holder);
    for (const close of set ?? []) close(reason);
  }
}

/**
 * Every `intervalMs`, closes the connections of credentials that ended since: API keys revoked or
 * past their roll's end, dashboard sessions signed out or expired. Two queries for all of them.
 */
export function closeRevokedConnections(prisma: Prisma, connections: LiveConnections, intervalMs: number, logger: Logger): Periodic {
  return every(
    intervalMs,
    async () => {
      const ids = connections.holders();
      if (ids.length === 0) return;
      const sessionIds = ids.filter((id) => id.startsWith("ses_"));
      const keyIds = ids.filter((id) => !id.startsWith("ses_"));
      const [ended, live] = await Promise.all([
        keyIds.length === 0
          ? []
          : prisma.apiKey.findMany({
              where: { id: { in: keyIds }, OR: [{ revokedAt: { not: null } }, { expiresAt: { lte: new Date() } }] },
              select: { id: true, revokedAt: true },
            }),
        sessionIds.length === 0
          ? []
          : prisma.dashboardSession.findMany({
              where: { id: { in: sessionIds }, lastSeenAt: { gt: new Date(Date.now() - SESSION_IDLE_MS) } },
              select: { id: true },
            }),
      ]);
      for (const { id, revokedAt } of ended) {
        logger.info({ keyId: id }, "API key ended: closing its live connections");
        connections.close(id, revokedAt ? "API key revoked" : "API key rolled: its overlap is over");
      }
      const open = new Set(live.map((s) => s.id));
      for (const id of sessionIds.filter((id) => !open.has(id))) connections.close(id, "signed out");
    },
    (err) => logger.warn({ err: (err as Error).message }, "ended-credential check failed; retrying"),
  );
}
