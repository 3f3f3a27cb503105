// The request contract of business details: the input of the dashboard's updateBusinessDetails. The
// door parses a request with it (parseInput) and hands the domain the typed result: the logo already
// decoded and checked by its bytes (domain/images.ts).
import { z } from "zod";
import { inspectImage } from "./images.js";
import { addressInput } from "./postal-address.js";

/** A logo's largest size: its data URL must fit a request body (100 KB) with room to spare. */
export const LOGO_MAX_BYTES = 64 * 1024;

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
  .transform((value, ctx) => {
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

/** The changes to a merchant's business details: legal name, postal address, tax id and logo (a data: URL). */
export const detailsSchema = z.strictObject(
  { legalName: optionalLine(200), address: addressInput.optional(), taxId: optionalLine(100), logo },
  { error: "must be an object" },
);

/** Business details' changes, parsed (detailsSchema). */
export type BusinessDetailsUpdate = z.output<typeof detailsSchema>;
