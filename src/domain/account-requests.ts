// The request contract of one's own account: the arguments of GraphQL's changePassword. The door
// parses a request with it (parseInput) and hands the domain the typed result.
import { z } from "zod";
import { passwordSchema } from "./passwords.js";

/** A password change: the current password (always asked), the new one, and a two-factor code when that is on. */
export const changePasswordSchema = z.strictObject(
  {
    currentPassword: z.string().min(1, "is required: your current password").max(200),
    newPassword: passwordSchema,
    totpCode: z.string().max(20).nullish(),
  },
  { error: "must be a JSON object" },
);

/** A password change, parsed (changePasswordSchema). */
export type PasswordChange = z.output<typeof changePasswordSchema>;
