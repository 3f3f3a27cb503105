// The seller's business details that invoices print: legal name, postal address, tax id and logo. One set
// per merchant, the same in both modes. The logo is an uploaded PNG or JPEG kept in the database and
// checked by its bytes (domain/images.ts), never a URL: the PDF is drawn on the server, which would
// otherwise fetch whatever a merchant named, at render time.
import { z } from "zod";
import type { Prisma } from "../db/client.js";
import { jsonOrNull } from "../db/json.js";
import type { Merchant } from "../generated/prisma/client.js";
import { addressInput, normaliseAddress, type PostalAddress, storedAddress } from "./postal-address.js";
import { notFound } from "./errors.js";
import { inspectImage } from "./images.js";
import { getMerchant } from "./merchants.js";
import { parseInput } from "./validation.js";

/** A logo's largest size: its data URL must fit a request body (100 KB) with room to spare. */
export const LOGO_MAX_BYTES = 64 * 1024;

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

// Blank clears: the dashboard's empty field and an explicit null mean the same.
const optionalLine = (max: number) =>
  z
    .string()
    .max(max)
    .transform((s) => s.trim() || null)
    .nullable()
    .optional();

const DATA_URL = /^data:(image\/png|image\/jpeg);base64,([A-Za-z0-9+/]*={0,2})$/;

const logo = z
  .string()
  .transform((value, ctx): BusinessLogo => {
    const match = DATA_URL.exec(value);
    if (!match) {
      ctx.addIssue({ code: "custom", message: "must be a base64 data: URL of a PNG or JPEG image (data:image/png;base64,…)" });
      return z.NEVER;
    }
    const data = Buffer.from(match[2]!, "base64");
    if (data.length > LOGO_MAX_BYTES) {
      ctx.addIssue({ code: "custom", message: `must be at most ${LOGO_MAX_BYTES / 1024} KB (this one is ${Math.ceil(data.length / 1024)} KB)` });
      return z.NEVER;
    }
    const image = inspectImage(data);
    if ("problem" in image) {
      ctx.addIssue({ code: "custom", message: image.problem });
      return z.NEVER;
    }
    // The bytes decide the type, whatever the data URL claimed.
    return { type: image.type, data };
  })
  .nullable()
  .optional();

const detailsSchema = z.strictObject(
  { legalName: optionalLine(200), address: addressInput.optional(), taxId: optionalLine(100), logo },
  { error: "must be an object" },
);

/**
 * Changes the business details invoices print; an absent field stays, `null` (or blank text) clears
 * one. Invoices already finalized keep the details they were issued with; the logo is the current one.
 */
export async function updateBusinessDetails(prisma: Prisma, merchantId: string, input: unknown): Promise<Merchant> {
  const d = parseInput(detailsSchema, input);
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
