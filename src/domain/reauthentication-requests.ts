// The request contract of re-authentication: the body of POST /dashboard/session/reauthenticate. The
// dashboard door parses a request with it (parseInput) and hands the domain the typed result.
import { z } from "zod";

/** The body of POST /dashboard/session/reauthenticate: the password and, with two-factor sign-in on, a code. */
export const reauthenticateSchema = z.strictObject(
  { password: z.string().max(200), totpCode: z.string().max(20).optional() },
  { error: "must be a JSON object" },
);

/** A re-authentication, parsed (reauthenticateSchema). */
export type ReauthenticateRequest = z.output<typeof reauthenticateSchema>;
