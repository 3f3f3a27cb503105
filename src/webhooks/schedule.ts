// When a failed delivery is tried again (.docs/webhooks.md "The request your endpoint receives"): after 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h and 10 h, each ±10 % so endpoints that failed together are not retried together.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay before retry n (index n-1) after n failed attempts. */
export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const;

/** Largest relative deviation from a scheduled delay. */
export const RETRY_JITTER = 0.1;

/** When to try again after `failedAttempts` failures, or null once the schedule is used up. */
export function nextAttemptAt(failedAttempts: number, now: Date, random: () => number = Math.random): Date | null {
  const delay = RETRY_DELAYS_MS[failedAttempts - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + Math.round(delay * (1 + RETRY_JITTER * (2 * random() - 1))));
}
