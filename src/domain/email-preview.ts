// An email as its recipient saw it, for the dashboard's preview and GraphQL's `html`: the stored HTML
// with a credential link's token redacted and the merchant's inline logo drawn from its row.
import type { Prisma } from "../db/client.js";
import type { Email } from "../generated/prisma/client.js";
import { LOGO_CID } from "../email/layout.js";
import { type BusinessLogo, businessLogoOf, logoDataUrl } from "./business-details.js";
import { withoutCredentials } from "./emails.js";
import { notFound } from "./errors.js";
import { inScope, type Scope } from "./scope.js";

/**
 * An email's HTML as its recipient saw it: the inline logo (`cid:logo`, which the sender attaches
 * from the merchant's row) drawn from `logo` as a data: URL, so a preview needs no attachment.
 */
export function emailPreviewHtml(email: Pick<Email, "type" | "html" | "inlineLogo">, logo: BusinessLogo | null): string {
  const html = withoutCredentials(email.type, email.html);
  if (!email.inlineLogo || !logo) return html;
  return html.replaceAll(`"cid:${LOGO_CID}"`, `"${logoDataUrl(logo)}"`);
}

/** The HTML of an email of this merchant and mode as its recipient saw it (emailPreviewHtml), or 404. */
export async function emailPreview(prisma: Prisma, scope: Scope, id: string): Promise<string> {
  const email = await prisma.email.findFirst({ where: { id, ...inScope(scope) }, include: { merchant: { select: { logo: true, logoType: true } } } });
  if (!email) throw notFound("email", id);
  return emailPreviewHtml(email, email.merchant && businessLogoOf(email.merchant));
}
