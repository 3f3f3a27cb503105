// The request contract of the charges' summary: GraphQL's chargeStats arguments. The door parses a
// request with it (parseInput) and hands the domain the typed result.
import { z } from "zod";
import { integerField } from "./validation.js";

/** The window of the summary: the last `days` UTC days (1–366, 30 by default). */
export const statsSchema = z.strictObject({ days: integerField(1, 366).default(30) });

/** A summary's window, parsed (statsSchema). */
export type ChargeStatsQuery = z.output<typeof statsSchema>;
