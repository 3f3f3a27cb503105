// Nullable JSON columns: Prisma writes SQL NULL only for its DbNull marker, never for a plain null.
import { Prisma as P } from "../generated/prisma/client.js";

/** `v` as a nullable JSON column takes it: SQL NULL for null. */
export function jsonOrNull<T>(v: T | null): T | typeof P.DbNull {
  return v === null ? P.DbNull : v;
}
