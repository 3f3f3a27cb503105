// Which constraint a failed write hit, whether it went through the ORM (P2002/P2003) or raw SQL
// (P2010 with the driver adapter's classification): callers turn these into API errors.
import { Prisma as P } from "../generated/prisma/client.js";

function adapterKind(e: P.PrismaClientKnownRequestError): string | undefined {
  return (e.meta as { driverAdapterError?: { cause?: { kind?: string } } } | undefined)?.driverAdapterError?.cause?.kind;
}

/** True when `e` is a unique-constraint violation. */
export function isUniqueViolation(e: unknown): boolean {
  return e instanceof P.PrismaClientKnownRequestError && (e.code === "P2002" || (e.code === "P2010" && adapterKind(e) === "UniqueConstraintViolation"));
}

/** True when `e` is a foreign-key violation (the referenced row is gone). */
export function isForeignKeyViolation(e: unknown): boolean {
  return e instanceof P.PrismaClientKnownRequestError && (e.code === "P2003" || (e.code === "P2010" && adapterKind(e) === "ForeignKeyConstraintViolation"));
}
