// Text the database can store. PostgreSQL refuses NUL in text and jsonb (22021, 22P05) and an
// unpaired UTF-16 surrogate has no UTF-8 form, so without this check such input fails deep in a
// write as a 500. Every door (REST, the hosted page, GraphQL, JWT claims) checks here first.
import { type AppError, invalidParam } from "./errors.js";

// Per UTF-16 code unit (no `u` flag), so a lone surrogate is visible to the pattern.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The param path (`metadata.cart`, `items[2].name`) of the first string in `value`, object keys
 * included, that holds NUL or an unpaired surrogate: a bad key names its object (`metadata`, or ""
 * at the top). Null when all of it can be stored.
 */
export function invalidTextPath(value: unknown, path = ""): string | null {
  // A loop, not recursion: a 100 KB JSON body can nest deeper than the call stack.
  const pending: [unknown, string][] = [[value, path]];
  while (pending.length > 0) {
    const [v, at] = pending.pop()!;
    if (typeof v === "string") {
      if (UNSTORABLE.test(v)) return at;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) pending.push([v[i], `${at}[${i}]`]);
    } else if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      if (entries.some(([key]) => UNSTORABLE.test(key))) return at;
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        pending.push([child, at ? `${at}.${key}` : key]);
      }
    }
  }
  return null;
}

/** The 400 `parameter_invalid` for text at `param` that holds NUL or an unpaired surrogate. */
export function invalidTextError(param: string): AppError {
  return invalidParam(param || null, `${param || "A parameter"} contains a NUL character or an unpaired surrogate; send valid UTF-8 text`);
}

/** Throws invalidTextError for the first string in `value` (keys included) the database cannot store. */
export function assertValidText(value: unknown, path = ""): void {
  const param = invalidTextPath(value, path);
  if (param !== null) throw invalidTextError(param);
}
