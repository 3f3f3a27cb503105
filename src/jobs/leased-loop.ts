// The loop the outboxes' workers share (the webhook dispatcher, the email sender): claim due rows for
// the free slots under a fresh lease token, work each one, keep the leases of those in flight alive,
// and on stop wait for them. The outbox's own module keeps its invariants (claims, outcomes only while
// the lease holds); this only decides when to claim and keeps count.
import type { Logger } from "pino";
import { randomBase62 } from "../domain/ids.js";

/** Counts per key (rows per lease token, requests per endpoint), forgetting a key at zero. */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(key: string, n = 1): void {
    const left = (this.counts.get(key) ?? 0) + n;
    if (left === 0) this.counts.delete(key);
    else this.counts.set(key, left);
  }
  atLeast(n: number): string[] {
    return [...this.counts].filter(([, c]) => c >= n).map(([key]) => key);
  }
  keys(): string[] {
    return [...this.counts.keys()];
  }
}

/** A sleep that `wake` cuts short (a slot freed, a stop). */
function wakeableSleep() {
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((r) => {
      const timer = setTimeout(r, ms);
      wake = () => {
        clearTimeout(timer);
        r();
      };
    }).finally(() => (wake = null));
  return { sleep, wake: () => wake?.() };
}

export interface LeasedLoop<T> {
  log: Logger;
  /** What is claimed, for log lines ("webhook deliveries"). */
  what: string;
  now: () => Date;
  /** Most rows worked at once. */
  concurrency: number;
  /** Free slots wanted before claiming again (claims are made for a few at a time); default 1. */
  claimBatch?: number;
  /** How often an idle loop looks for due rows. */
  intervalMs: number;
  /** How long one row may take at most: the longest wait for a slot. */
  workMs: number;
  /** How long a claim holds without renewal; it is renewed every third of it. */
  leaseMs: number;
  /** Claims at most `limit` due rows under `token` until `leaseUntil`. */
  claim(c: { token: string; now: Date; leaseUntil: Date; limit: number }): Promise<T[]>;
  renew(tokens: string[], until: Date): Promise<void>;
  /** Works one claimed row and records its outcome under `token`; a rejection is logged (the row is taken again when its lease ends). */
  work(row: T, token: string): Promise<void>;
  /** What names a row in a log line (its ids, never its content). */
  context(row: T): Record<string, unknown>;
  /** Told when a row is started and when it is done. */
  started?(row: T): void;
  done?(row: T): void;
}

/** A running loop. */
export interface LeasedLoopHandle {
  /** Resolves once the rows in flight are done. */
  stop(): Promise<void>;
  /** Looks for due rows now instead of at the next interval (rows were just committed). */
  ring(): void;
}

/** Runs `o` until stopped. */
export function startLeasedLoop<T>(o: LeasedLoop<T>): LeasedLoopHandle {
  let stopped = false;
  let inFlight = 0;
  /** Rung since the last claim began: what was committed meanwhile may have been invisible to it. */
  let rung = false;
  /** Claim tokens with rows still in flight. */
  const leases = new Tally();
  const { sleep, wake } = wakeableSleep();

  function launch(row: T, token: string) {
    inFlight++;
    o.started?.(row);
    o.work(row, token)
      .catch((err) => o.log.error({ err, ...o.context(row) }, `${o.what}: an outcome could not be recorded; tried again when its lease ends`))
      .finally(() => {
        inFlight--;
        o.done?.(row);
        leases.add(token, -1);
        wake();
      });
  }

  // Keeps the leases of rows in flight alive; a process that dies stops renewing them.
  const renewal = setInterval(() => {
    const tokens = leases.keys();
    if (tokens.length === 0) return;
    o.renew(tokens, new Date(o.now().getTime() + o.leaseMs)).catch((err) => o.log.error({ err }, `could not renew the leases of ${o.what}`));
  }, o.leaseMs / 3);

  /** Claims up to `free` rows and starts them; returns how many. */
  async function claim(free: number): Promise<number> {
    const token = randomBase62(20);
    const now = o.now();
    const rows = await o.claim({ token, now, leaseUntil: new Date(now.getTime() + o.leaseMs), limit: free });
    if (rows.length > 0) leases.add(token, rows.length);
    for (const row of rows) launch(row, token);
    return rows.length;
  }

  const loop = (async () => {
    while (!stopped) {
      const free = o.concurrency - inFlight;
      if (free < (o.claimBatch ?? 1)) {
        await sleep(o.workMs);
        continue;
      }
      rung = false;
      const claimed = await claim(free).catch((err) => {
        o.log.error({ err }, `could not claim ${o.what}`);
        return null;
      });
      if (claimed === null) await sleep(1000);
      // A full batch means more may be due: go again as soon as a slot is free.
      else if (!stopped && claimed < free && !rung) await sleep(o.intervalMs);
    }
  })();

  return {
    ring() {
      rung = true;
      wake();
    },
    async stop() {
      stopped = true;
      wake();
      await loop;
      while (inFlight > 0) await sleep(o.workMs);
      clearInterval(renewal);
    },
  };
}
