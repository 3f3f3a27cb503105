// The billing engine's pure parts: the retry schedule as configured, and periods as the chain's windows.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule, periodAt } from "../../src/domain/subscription-billing.js";

describe("SUBSCRIPTION_RETRY_SCHEDULE", () => {
  it("is 1 h, 1 day, 3 days, 5 days by default, and takes s, m, h and d", () => {
    expect(parseRetrySchedule(DEFAULT_RETRY_SCHEDULE)).toEqual([3_600_000, 86_400_000, 3 * 86_400_000, 5 * 86_400_000]);
    expect(parseRetrySchedule("30s, 15m,2h")).toEqual([30_000, 900_000, 7_200_000]);
    expect(loadConfig({ NODE_ENV: "test" }).subscriptionRetrySchedule).toEqual(parseRetrySchedule(DEFAULT_RETRY_SCHEDULE));
    expect(loadConfig({ NODE_ENV: "test", SUBSCRIPTION_RETRY_SCHEDULE: "10m" }).subscriptionRetrySchedule).toEqual([600_000]);
  });

  it("refuses anything else with the variable and the entry named", () => {
    for (const bad of ["", "1h,", "1.5h", "0h", "1w", "-1d", "1 h", "h"]) {
      expect(() => parseRetrySchedule(bad), bad).toThrow(/entry \d+ is not a duration/);
    }
    expect(() => loadConfig({ NODE_ENV: "test", SUBSCRIPTION_RETRY_SCHEDULE: "1h,soon" })).toThrow(/SUBSCRIPTION_RETRY_SCHEDULE: entry 2 is not a duration/);
  });
});

describe("periodAt", () => {
  it("is the permission's window k: [start + k period, start + (k + 1) period)", () => {
    expect(periodAt(1_000n, 86_400, 0)).toEqual({ index: 0, start: new Date(1_000_000), end: new Date((1_000 + 86_400) * 1000) });
    expect(periodAt(1_000n, 86_400, 3)).toEqual({ index: 3, start: new Date((1_000 + 3 * 86_400) * 1000), end: new Date((1_000 + 4 * 86_400) * 1000) });
  });
});
