// An email's HTML part as its recipient saw it, for the frame on the dashboard's email page
// (Developers → Emails): opened with the session cookie like the CSV downloads (a read: no CSRF token;
// another site cannot read the answer), only the session's own merchant and mode. The HTML is the
// stored one, whoever wrote it, so it is served as untrusted: a CSP sandbox (no script, no origin of its
// own, so no session and no API), inline styles (emails are styled inline) and data: images only (the
// logo), framed by the dashboard alone, and no referrer for a link followed from it.
import type { FastifyInstance } from "fastify";
import type { Prisma } from "../db/client.js";
import { emailPreview } from "../domain/email-preview.js";
import { inScope } from "../domain/scope.js";
import type { RateLimiter } from "../http/rate-limit.js";
import { requestSession } from "./session-cookie.js";

/** The headers an email's HTML is served with. */
export const EMAIL_PREVIEW_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy":
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "private, no-store",
};

/** Registers GET /dashboard/emails/:id/html. */
export function dashboardEmailRoutes(app: FastifyInstance, deps: { prisma: Prisma; rateLimiter: RateLimiter; publicUrl: string }): void {
  app.get<{ Params: { id: string } }>("/dashboard/emails/:id/html", async (req, reply) => {
    const principal = await requestSession(req, deps, false);
    await deps.rateLimiter.consume(principal.credentialId, "read");
    const html = await emailPreview(deps.prisma, inScope(principal), req.params.id);
    return reply.headers(EMAIL_PREVIEW_HEADERS).send(html);
  });
}
