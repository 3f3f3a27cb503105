// Each API resource's fields are described once, by `.describe()` on its zod schema (the REST
// resource, which the OpenAPI document is printed from); GraphQL fields and CSV columns read the
// same text here instead of writing their own, so the three cannot drift apart.
import type { z } from "zod";

/** The description of `field` of `resource`, as written on the zod schema; throws when it has none. */
export function describe<Shape extends Record<string, z.ZodType>>(resource: z.ZodObject<Shape>, field: keyof Shape & string): string {
  const schema: z.ZodType | undefined = resource.shape[field];
  const text = schema?.description ?? unwrapped(schema)?.description;
  // A missing text would leave a GraphQL field or a CSV column undocumented without anyone noticing.
  if (!text) throw new Error(`The resource field ${field} has no .describe() text.`);
  return text;
}

/** The schema inside a nullable or optional wrapper, where `.describe()` may sit instead. */
function unwrapped(schema: z.ZodType | undefined): z.ZodType | undefined {
  return schema && "unwrap" in schema && typeof schema.unwrap === "function" ? (schema.unwrap() as z.ZodType) : undefined;
}
