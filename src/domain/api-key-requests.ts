// The request contract of API keys: what a roll takes (GraphQL's rollApiKey, `stablegate keys roll`).
// The doors parse a request with it (parseInput) and hand the domain the typed result.
import { z } from "zod";
import { overlapHoursField } from "./validation.js";

/** A roll's arguments: the hours the old key keeps working (0–168, default 24). */
export const rollSchema = z.strictObject({ overlapHours: overlapHoursField() });

/** A roll, parsed (rollSchema). */
export type ApiKeyRoll = z.output<typeof rollSchema>;
