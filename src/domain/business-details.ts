// The seller's business details that invoices print: legal name, postal address, tax id and logo. One set
// per merchant, the same in both modes. The logo is an uploaded PNG or JPEG kept in the database and
// checked by its bytes (domain/images.ts), never a URL: the PDF is drawn on the server, which would
// otherwise fetch whatever a merchant named, at render time.
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { Merchant } from "../generated/prisma/client.js";
import type { BusinessDetailsUpdate } from "./business-details-requests.js";
import { normaliseAddress, type PostalAddress, storedAddress } from "./postal-address.js";
import { notFound } from "./errors.js";
import { getMerchant } from "./merchants.js";

/** Who bills, as an invoice shows it under the merchant's name (a type, not an interface: a JSON column takes it as it is). */
export type SellerDetails = {
  legalName: string | null;
  address: PostalAddress | null;
  taxId: string | null;
};

/** A logo as stored: its bytes and their type. */
export interface BusinessLogo {
  type: "image/png" | "image/jpeg";
  data: Uint8Array;
}

/**
 * Changes the business details invoices print; an absent field stays, `null` (or blank text) clears
 * one. Invoices already finalized keep the details they were issued with; the logo is the current one.
 */
export async function updateBusinessDetails(prisma: Prisma, merchantId: string, d: BusinessDetailsUpdate): Promise<Merchant> {
  const data = {
    ...(d.legalName !== undefined && { legalName: d.legalName }),
    ...(d.address !== undefined && { businessAddress: jsonOrNull(normaliseAddress(d.address)) }),
    ...(d.taxId !== undefined && { taxId: d.taxId }),
    ...(d.logo !== undefined && { logo: d.logo && new Uint8Array(d.logo.data), logoType: d.logo?.type ?? null }),
  };
  const { count } = await prisma.merchant.updateMany({ where: { id: merchantId }, data });
  if (count === 0) throw notFound("merchant", merchantId);
  return getMerchant(prisma, merchantId);
}

/** A merchant's business details as an invoice finalized now freezes them. */
export function sellerDetailsOf(m: Pick<Merchant, "legalName" | "businessAddress" | "taxId">): SellerDetails {
  return { legalName: m.legalName, address: storedAddress(m.businessAddress), taxId: m.taxId };
}

/** A merchant's logo, or null without one. */
export function businessLogoOf(m: Pick<Merchant, "logo" | "logoType">): BusinessLogo | null {
  return m.logo && (m.logoType === "image/png" || m.logoType === "image/jpeg") ? { type: m.logoType, data: m.logo } : null;
}

/** The logo as a data: URL, which pages show without another request (their CSP allows `data:` images). */
export function logoDataUrl(logo: BusinessLogo): string {
  return `data:${logo.type};base64,${Buffer.from(logo.data).toString("base64")}`;
}
