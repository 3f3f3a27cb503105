// REST /v1/emails: the emails the service wrote for the key's merchant and mode (invoices, receipts,
// resets…), as they were sent or, without SMTP, kept. Rules live in domain/emails.ts.
import type { FastifyInstance } from "fastify";
import { listSchema } from "../domain/email-requests.js";
import { EmailResource, emailResource, getEmail, listEmails } from "../domain/emails.js";
import { parseInput } from "../domain/validation.js";
import { listOf } from "./openapi.js";
import { type RestDeps, scopeOf } from "./plumbing.js";

const tag = "Emails";

type IdParams = { Params: { id: string } };

/** Registers the email endpoints. */
export function emailRoutes(app: FastifyInstance, { prisma }: RestDeps): void {
  const list = {
    group: "list",
    doc: {
      operationId: "listEmails",
      summary: "List emails, newest first (to, type, status)",
      description:
        "Every email written for the key's merchant and mode, newest first, paged by cursor: `to` keeps one recipient (case-insensitive), `type` one kind, `status` one status. Without SMTP_URL (development) emails are `held`: kept here, never sent.",
      tag,
      query: listSchema,
      ok: { 200: listOf(EmailResource) },
    },
  } as const;
  app.get("/v1/emails", { config: list }, async (req) => {
    const { data, hasMore } = await listEmails(prisma, scopeOf(req), parseInput(listSchema, req.query));
    return { object: "list", data: data.map(emailResource), hasMore };
  });

  const retrieve = {
    group: "read",
    doc: {
      operationId: "getEmail",
      summary: "Retrieve an email",
      description: "The email with its status, attempts, the server's last refusal and its plain-text part, exactly as sent.",
      tag,
      ok: { 200: EmailResource },
    },
  } as const;
  app.get<IdParams>("/v1/emails/:id", { config: retrieve }, async (req) => {
    return emailResource(await getEmail(prisma, scopeOf(req), req.params.id));
  });
}
