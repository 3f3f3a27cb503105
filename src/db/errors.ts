// Which constraint a failed write hit, whether it went through the ORM (P2002/P2003), raw SQL through
// Prisma (P2010 with the driver adapter's classification) or the pool beneath it (the SQLSTATE, as pg
// and PGlite report it): callers turn these into API errors.
import { Prisma as P } from "../generated/prisma/client.js";

function adapterKind(e: P.PrismaClientKnownRequestError): string | undefined {
  return (e.meta as { driverAdapterError?: { cause?: { kind?: string } } } | undefined)?.driverAdapterError?.cause?.kind;
}

/** The SQLSTATE of an error from the pool beneath Prisma (Prisma's own codes are P…, never a SQLSTATE). */
function sqlState(e: unknown): unknown {
  return e instanceof Error && "code" in e ? e.code : undefined;
}

/** True when `e` is a unique-constraint violation. */
export function isUniqueViolation(e: unknown): boolean {
  if (sqlState(e) === "23505") return true;
  return e instanceof P.PrismaClientKnownRequestError && (e.code === "P2002" || (e.code === "P2010" && adapterKind(e) === "UniqueConstraintViolation"));
}

/** True when `e` is a foreign-key violation (the referenced row is gone). */
export function isForeignKeyViolation(e: unknown): boolean {
  if (sqlState(e) === "23503") return true;
  return e instanceof P.PrismaClientKnownRequestError && (e.code === "P2003" || (e.code === "P2010" && adapterKind(e) === "ForeignKeyConstraintViolation"));
}
