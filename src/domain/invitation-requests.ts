// The request contract of invitations: the inviteUser mutation's arguments and the body of POST
// /dashboard/invitations/accept. The doors parse a request with these (parseInput) and hand the
// domain the typed result.
import { z } from "zod";
import { passwordSchema } from "./passwords.js";
import { ROLES } from "./permissions.js";

/** Whom to invite, and as what (admin by default). */
export const inviteSchema = z.strictObject(
  {
    email: z
      .email({ error: "must be a valid email address" })
      .max(254)
      .transform((e) => e.toLowerCase()),
    // The roles are domain/permissions.ts's: one list for invitations, the CLI and setUserRole.
    role: z.enum(ROLES, { error: `must be one of ${ROLES.join(", ")}` }).default("admin"),
  },
  { error: "must be a JSON object" },
);
/** The body of POST /dashboard/invitations/accept: the link's token and the invitee's password. */
export const acceptInvitationSchema = z.strictObject({ token: z.string().max(200), password: passwordSchema }, { error: "must be a JSON object" });

/** An invitation to make, parsed (inviteSchema). */
export type InviteRequest = z.output<typeof inviteSchema>;
/** An invitation accepted, parsed (acceptInvitationSchema). */
export type AcceptInvitationRequest = z.output<typeof acceptInvitationSchema>;
