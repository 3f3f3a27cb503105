// Live connections per API key, or per client address for callers without one: a WebSocket, or one
// SSE subscription (each is its own HTTP request). Caps them per key or address, and closes those of
// a revoked key, whichever process revoked it.
import type { Prisma } from "../db/client.js";
import { AppError } from "../domain/errors.js";
import { every, type Periodic } from "../lib/periodic.js";
import type { Logger } from "pino";

/** Closes one live connection, saying why. */
export type CloseConnection = (reason: string) => void;

/** A registered connection; `release()` when it ends. */
export interface LiveConnection {
  release(): void;
}

/** The live connections of this process, by API key id (or client address). */
export class LiveConnections {
  private readonly byKey = new Map<string, Set<CloseConnection>>();

  constructor(
    private readonly maxPerKey: number,
    /** Whose connections these are, for the limit's message: "this API key", "this address". */
    private readonly holder = "this API key",
  ) {}

  /** Registers a connection of `keyId`; 429 `rate_limited` when the key already has its maximum. */
  open(keyId: string, close: CloseConnection): LiveConnection {
    let set = this.byKey.get(keyId);
    if (set && set.size >= this.maxPerKey) {
      throw new AppError("rate_limited", `Too many live connections for ${this.holder} (at most ${this.maxPerKey} per API process); close one first.`);
    }
    if (!set) this.byKey.set(keyId, (set = new Set()));
    set.add(close);
    // Idempotent: the transports may report an end more than once.
    return {
      release: () => {
        set.delete(close);
        if (set.size === 0 && this.byKey.get(keyId) === set) this.byKey.delete(keyId);
      },
    };
  }

  /** Ids of the keys with an open connection. */
  keyIds(): string[] {
    return [...this.byKey.keys()];
  }

  /** Connections open in this process. */
  get size(): number {
    let n = 0;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  /** Closes every connection of `keyId`. */
  closeKey(keyId: string, reason: string): void {
    const set = this.byKey.get(keyId);
    this.byKey.delete(keyId);
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
      const ids = connections.keyIds();
      if (ids.length === 0) return;
      const sessionIds = ids.filter((id) => id.startsWith("ses_"));
      const keyIds = ids.filter((id) => !id.startsWith("ses_"));
      const [revoked, live] = await Promise.all([
        keyIds.length === 0
          ? []
          : prisma.apiKey.findMany({
              where: { id: { in: keyIds }, OR: [{ revokedAt: { not: null } }, { expiresAt: { lte: new Date() } }] },
              select: { id: true },
            }),
        sessionIds.length === 0 ? [] : prisma.dashboardSession.findMany({ where: { id: { in: sessionIds } }, select: { id: true } }),
      ]);
      for (const { id } of revoked) {
        logger.info({ keyId: id }, "API key revoked: closing its live connections");
        connections.closeKey(id, "API key revoked");
      }
      const open = new Set(live.map((s) => s.id));
      for (const id of sessionIds.filter((id) => !open.has(id))) connections.closeKey(id, "signed out");
    },
    (err) => logger.warn({ err: (err as Error).message }, "revoked-key check failed; retrying"),
  );
}
