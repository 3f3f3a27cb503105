// The request contract of dashboard sessions: the bodies of POST /dashboard/session (signing in) and
// PATCH /dashboard/session (switching mode). The dashboard door parses a request with these
// (parseInput) and hands the domain the typed result.
import { z } from "zod";

const mode = z.enum(["test", "live"], { error: "must be test or live" });

/** The body of POST /dashboard/session. */
export const signInSchema = z.strictObject(
  { email: z.string().max(254), password: z.string().max(200), totpCode: z.string().max(20).optional(), mode: mode.optional() },
  { error: "must be a JSON object" },
);

/** The body of PATCH /dashboard/session. */
export const switchModeSchema = z.strictObject({ mode }, { error: "must be a JSON object" });

/** A sign-in, parsed (signInSchema). */
export type SignInRequest = z.output<typeof signInSchema>;
/** A mode to switch to, parsed (switchModeSchema). */
export type SwitchModeRequest = z.output<typeof switchModeSchema>;
