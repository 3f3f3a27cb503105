// `DateTime`: an instant as the REST API writes it, ISO 8601 in UTC with milliseconds
// ("2026-05-01T12:00:00.000Z"). Resolvers hand over Date values; this scalar prints them. Types that
// expose a REST resource as it is pass its text, which must already be that form.
import { GraphQLError, Kind } from "graphql";
import { builder } from "../builder.js";

// Date.parse alone would also take "May 1" or a bare number: an instant must name its date and offset.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether the text's calendar date exists (Date.parse rolls "02-30" over into March). */
function realDay(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}

/** The instant an ISO 8601 text names; a clear error for anything else. */
function dateFromText(value: unknown): Date {
  const time = typeof value === "string" && ISO_INSTANT.test(value) && realDay(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time))
    throw new GraphQLError(`DateTime must be an ISO 8601 instant with an offset, such as "2026-05-01T12:00:00Z"; got ${JSON.stringify(value)}.`);
  return new Date(time);
}

builder.scalarType("DateTime", {
  description: 'An instant in ISO 8601, UTC, with milliseconds, e.g. "2026-05-01T12:00:00.000Z" (the same text as the REST API\'s timestamps).',
  serialize: (value) => {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    if (typeof value === "string" && ISO_INSTANT.test(value) && new Date(value).toISOString() === value) return value;
    throw new GraphQLError(`DateTime fields resolve to a valid Date or its toISOString() text, not ${JSON.stringify(value)}.`);
  },
  parseValue: dateFromText,
  parseLiteral: (node) => dateFromText(node.kind === Kind.STRING ? node.value : undefined),
});
