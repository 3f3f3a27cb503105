// `Mode`: test or live, the two worlds a merchant's records, keys and settings are kept apart in.
import { builder } from "../builder.js";

export const Mode = builder.enumType("Mode", {
  description: "TEST: the devnet and test chains, no real money. LIVE: real money.",
  values: {
    TEST: { value: "test", description: "Test keys and records: the devnet and test chains." },
    LIVE: { value: "live", description: "Live keys and records: mainnets, real money." },
  } as const,
});

/** The livemode flag a Mode names. */
export function isLive(mode: "test" | "live"): boolean {
  return mode === "live";
}
