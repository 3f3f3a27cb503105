// `Invitation`: how a merchant's team grows (dashboard sessions only), each with the role the invitee
// gets. Inviting needs a recent re-authentication; the invitee gets an emailed link and chooses their own password
// (POST /dashboard/invitations/accept). Rules live in domain/invitations.ts.
import { inviteSchema } from "../../domain/invitation-requests.js";
import { type InvitationView, inviteUser, listInvitations, revokeInvitation } from "../../domain/invitations.js";
import { confirmedBySession } from "../../domain/reauthentication.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { UserRole } from "./User.js";

export const Invitation = builder.objectRef<InvitationView & { link?: string }>("Invitation").implement({
  description: "A pending invitation to the merchant's dashboard: the invitee chooses a password with the emailed link (7 days, once).",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The invitation's id (invt_…)." }),
    email: t.exposeString("email", { description: "Who was invited (lower case)." }),
    role: t.field({ type: UserRole, description: "The role they will have once they join.", resolve: (i) => i.role }),
    invitedBy: t.exposeString("invitedBy", { nullable: true, description: "The id of the user who invited (usr_…), null once that user is gone." }),
    expiresAt: t.field({ type: "DateTime", description: "When the link stops working (ISO 8601).", resolve: (i) => i.expiresAt }),
    link: t.string({
      nullable: true,
      description:
        "The invitation's link, to pass on yourself: only in inviteUser's answer, and only when this service sends no email (SMTP_URL unset); null otherwise.",
      // Where emails are sent, the link goes to the invitee's mailbox only.
      resolve: (i, _args, ctx) => (ctx.email.smtpUrl === undefined ? (i.link ?? null) : null),
    }),
    createdAt: t.field({ type: "DateTime", description: "ISO 8601.", resolve: (i) => i.createdAt }),
  }),
});

builder.queryFields((t) => ({
  invitations: t.field({
    type: [Invitation],
    description: "The merchant's pending invitations (neither accepted, revoked nor expired), newest first (dashboard sessions only).",
    resolve: (_root, _args, ctx) => listInvitations(ctx.prisma, ctx.session().merchantId),
  }),
}));

builder.mutationFields((t) => ({
  inviteUser: t.field({
    type: Invitation,
    description:
      "Invites someone to your merchant's dashboard: they get an email with a link (7 days, once) where they choose their own password. 409 `user_exists` when the email has an account; a pending invitation of the same email is replaced. Needs your password: as `password`, or a re-authentication in the last 5 minutes.",
    args: {
      email: t.arg.string({ required: true, description: "Who to invite." }),
      role: t.arg({ type: UserRole, description: "The role they will have: ADMIN by default; only owners invite an OWNER." }),
      password: t.arg.string({ description: "Your password, unless you re-authenticated in the last 5 minutes." }),
      totpCode: t.arg.string({ description: "With `password`, when two-factor sign-in is on: a current code or a recovery code." }),
    },
    resolve: async (_root, { email, role, password, totpCode }, ctx) => {
      const session = ctx.session();
      const confirm = confirmedBySession(ctx.prisma, ctx.rateLimiter, session, { password, totpCode });
      if (!ctx.charges.publicUrl) throw new Error("PUBLIC_URL is not in the charge settings: invitation links cannot be made.");
      return inviteUser(ctx.prisma, session, parseInput(inviteSchema, { email, ...(role != null && { role }) }), confirm, ctx.charges.publicUrl, ctx.actor());
    },
  }),
  revokeInvitation: t.field({
    type: Invitation,
    description: "Revokes a pending invitation: its link stops working (dashboard sessions only).",
    args: { id: t.arg.id({ required: true, description: "The invitation's id (invt_…)." }) },
    resolve: (_root, { id }, ctx) => revokeInvitation(ctx.prisma, ctx.session().merchantId, id),
  }),
}));
