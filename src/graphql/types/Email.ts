// `Email`: the emails written for the caller's merchant and mode (`emails`, like REST's /v1/emails),
// with the HTML part as its recipient saw it for the dashboard's preview, and `emailSending`: whether
// this service sends them at all. Rules live in domain/emails.ts.
import { describe } from "../../domain/describe.js";
import { businessLogoOf } from "../../domain/business-details.js";
import {
  countEmails,
  EMAIL_STATUS_DESCRIPTIONS,
  EMAIL_STATUSES,
  EMAIL_TYPES,
  emailResource,
  type EmailStatus as Status,
  getEmail,
  listEmails,
  EmailResource,
} from "../../domain/emails.js";
import { filterSchema, listSchema } from "../../domain/email-requests.js";
import { parseInput } from "../../domain/validation.js";
import { emailPreviewHtml } from "../../domain/email-preview.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

// Upper case like every GraphQL enum; the values stay the domain's (and REST's) lower-case ones.
const EmailType = builder.enumType("EmailType", {
  description: "What an email is: INVOICE is invoice, PASSWORD_RESET is password_reset, and so on.",
  values: Object.fromEntries(EMAIL_TYPES.map((type) => [type.toUpperCase(), { value: type, description: `An email of type ${type}.` }])),
});

const EmailStatus = builder.enumType("EmailStatus", {
  description: "Where an email is.",
  values: Object.fromEntries(EMAIL_STATUSES.map((s) => [s.toUpperCase(), { value: s, description: EMAIL_STATUS_DESCRIPTIONS[s] }])) as Record<
    string,
    { value: Status; description: string }
  >,
});

const Email = builder.prismaNode("Email", {
  description: "An email the service wrote for your merchant (an invoice, a receipt, a password reset…), as it was sent or, without SMTP, kept.",
  id: { field: "id" },
  findUnique: (id, ctx) => ({ id, ...ctx.scope() }),
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: describe(EmailResource, "livemode") }),
    type: t.field({ type: EmailType, description: describe(EmailResource, "type"), resolve: (e) => emailResource(e).type }),
    to: t.exposeString("to", { description: describe(EmailResource, "to") }),
    subject: t.exposeString("subject", { description: describe(EmailResource, "subject") }),
    status: t.field({ type: EmailStatus, description: describe(EmailResource, "status"), resolve: (e) => emailResource(e).status }),
    relatedId: t.exposeString("relatedId", { nullable: true, description: describe(EmailResource, "relatedId") }),
    attempts: t.exposeInt("attempts", { description: describe(EmailResource, "attempts") }),
    lastError: t.exposeString("lastError", { nullable: true, description: describe(EmailResource, "lastError") }),
    text: t.string({
      description: describe(EmailResource, "text"),
      resolve: (e) => emailResource(e).text,
    }),
    html: t.string({
      description:
        "The HTML part as its recipient saw it (a password reset's or an invitation's link with its token [redacted]), the merchant's inline logo drawn as a data: URL: show it in a sandboxed frame, never run it.",
      select: { type: true, html: true, inlineLogo: true, merchant: { select: { logo: true, logoType: true } } },
      resolve: (e) => emailPreviewHtml(e, e.merchant ? businessLogoOf(e.merchant) : null),
    }),
    createdAt: t.field({ type: "DateTime", description: describe(EmailResource, "createdAt"), resolve: (e) => e.createdAt }),
    sentAt: t.field({ type: "DateTime", nullable: true, description: describe(EmailResource, "sentAt"), resolve: (e) => e.sentAt }),
  }),
});

const EmailSending = builder.objectRef<{ configured: boolean; from: string }>("EmailSending").implement({
  description: "Whether this service sends emails: without SMTP_URL every email is kept (held) and shown here, never sent.",
  fields: (t) => ({
    configured: t.exposeBoolean("configured", { description: "True when SMTP_URL is set: emails are sent." }),
    from: t.exposeString("from", { description: "The address emails are sent from (EMAIL_FROM)." }),
  }),
});

builder.queryFields((t) => ({
  emails: t.connection(
    {
      type: Email,
      description: "Emails written for your merchant in this mode, newest first.",
      args: {
        to: t.arg.string({ description: "Only emails to this address (case-insensitive, the whole address)." }),
        type: t.arg({ type: EmailType, description: "Only emails of this type." }),
        status: t.arg({ type: EmailStatus, description: "Only emails in this status." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filter = { to: args.to ?? undefined, type: args.type ?? undefined, status: args.status ?? undefined };
        const page = await listEmails(ctx.prisma, scope, parseInput(listSchema, { ...filter, ...pageRequest(args) }), pageEnd(args));
        return connectionOf(page, args, () => countEmails(ctx.prisma, scope, parseInput(filterSchema, filter)));
      },
    },
    countedConnection("Emails matching the filters."),
  ),
  email: t.prismaField({
    type: "Email",
    description: "An email by id; resource_missing when your merchant and mode have none.",
    args: { id: t.arg.id({ required: true, description: "The email's id (eml_…)." }) },
    resolve: (query, _root, { id }, ctx) => getEmail(ctx.prisma, ctx.scope(), id, query),
  }),
  emailSending: t.field({
    type: EmailSending,
    description: "Whether this service sends emails (SMTP_URL), and from which address.",
    resolve: (_root, _args, ctx) => {
      ctx.scope();
      return { configured: ctx.email.smtpUrl !== undefined, from: ctx.email.from };
    },
  }),
}));
