// The request contract of password resets: the bodies of POST /dashboard/password/forgot and
// /dashboard/password/reset. The dashboard door parses a request with these (parseInput) and hands
// the domain the typed result.
import { z } from "zod";
import { passwordSchema } from "./passwords.js";

/** The body of POST /dashboard/password/forgot. */
export const forgotPasswordSchema = z.strictObject({ email: z.string().max(254) }, { error: "must be a JSON object" });
/** The body of POST /dashboard/password/reset: the link's token and the new password. */
export const resetPasswordSchema = z.strictObject({ token: z.string().max(200), password: passwordSchema }, { error: "must be a JSON object" });

/** A "forgot password" request, parsed (forgotPasswordSchema). */
export type ForgotPasswordRequest = z.output<typeof forgotPasswordSchema>;
/** A reset with a link's token, parsed (resetPasswordSchema). */
export type ResetPasswordRequest = z.output<typeof resetPasswordSchema>;
