// `BusinessDetails`: what invoices print about the seller (legal name, address, tax id, logo), on
// `MerchantSettings.businessDetails`, changed by `updateBusinessDetails` (dashboard sessions only).
// Rules live in domain/business-details.ts.
import { detailsSchema } from "../../domain/business-details-requests.js";
import { businessLogoOf, logoDataUrl, sellerDetailsOf, updateBusinessDetails } from "../../domain/business-details.js";
import type { Merchant } from "../../domain/merchants.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { Address, AddressInput } from "./Address.js";
import { MerchantSettings } from "./Viewer.js";

const BusinessDetails = builder.objectRef<Merchant>("BusinessDetails").implement({
  description:
    "The seller as the hosted invoice page and the invoice PDF show it, the same in both modes. An invoice keeps the legal name, address and tax id it was finalized with; the logo is always the current one.",
  fields: (t) => ({
    legalName: t.string({
      nullable: true,
      description: "The registered name of the business; the merchant's name stands in when null.",
      resolve: (m) => m.legalName,
    }),
    address: t.field({ type: Address, nullable: true, description: "The business's postal address.", resolve: (m) => sellerDetailsOf(m).address }),
    taxId: t.string({ nullable: true, description: "A VAT number or other tax id, printed as given.", resolve: (m) => m.taxId }),
    logo: t.string({
      nullable: true,
      description: "The logo as a data: URL (a PNG or JPEG, at most 64 KB and 2048×2048 pixels); null when there is none.",
      resolve: (m) => {
        const logo = businessLogoOf(m);
        return logo && logoDataUrl(logo);
      },
    }),
  }),
});

builder.objectField(MerchantSettings, "businessDetails", (t) =>
  t.field({ type: BusinessDetails, description: "What invoices print about the seller.", resolve: (m) => m }),
);

const BusinessDetailsInput = builder.inputType("BusinessDetailsInput", {
  description: "The business details to change; an absent one stays as it is, null (or blank text) clears it.",
  fields: (t) => ({
    legalName: t.string({ description: "The registered name of the business (at most 200 characters)." }),
    address: t.field({ type: AddressInput, description: "Replaces the whole address (the country an ISO 3166-1 alpha-2 code); null clears it." }),
    taxId: t.string({ description: "A VAT number or other tax id (at most 100 characters)." }),
    logo: t.string({
      description:
        "A base64 data: URL of a PNG or JPEG (data:image/png;base64,…), at most 64 KB and 2048×2048 pixels, checked by its bytes; null removes the logo. Never a link: the PDF fetches nothing.",
    }),
  }),
});

builder.mutationFields((t) => ({
  updateBusinessDetails: t.field({
    type: MerchantSettings,
    description: "Changes the business details invoices print: legal name, address, tax id and logo (dashboard sessions only).",
    args: { input: t.arg({ type: BusinessDetailsInput, required: true, description: "The changes." }) },
    resolve: (_root, { input }, ctx) => updateBusinessDetails(ctx.prisma, ctx.session().merchantId, parseInput(detailsSchema, { ...input })),
  }),
}));
