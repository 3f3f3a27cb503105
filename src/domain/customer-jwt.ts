// Verifies the customer JWTs of POST /v1/customers/jwt (.docs/payments.md "From a browser, with a JWT").
import { decodeProtectedHeader, jwtVerify } from "jose";
import type { Prisma } from "../db/client.js";
import type { CustomerClaims } from "./customers.js";
import { AppError } from "./errors.js";
import type { Scope } from "./scope.js";
import { assertValidText } from "./text.js";

const MAX_LIFETIME_SECONDS = 3600;
const CLOCK_SKEW_SECONDS = 30;
const KID = /^jwk_(test|live)_[0-9A-Za-z]{24}$/;

function invalid(reason: string): AppError {
  return new AppError("jwt_invalid", `Invalid customer JWT: ${reason}`);
}

/**
 * Checks an `Authorization: Bearer` JWT: HS256, signed with the merchant's secret named by `kid`,
 * with `email`, `iat` and an `exp` at most one hour ahead. Returns the scope it grants and its claims.
 */
export async function verifyCustomerJwt(prisma: Prisma, authorization: string | undefined): Promise<{ scope: Scope; claims: CustomerClaims }> {
  const token = /^Bearer (\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token) throw invalid("send it as 'Authorization: Bearer <token>'");
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw invalid("the token is not a well-formed JWT");
  }
  if (!kid || !KID.test(kid)) throw invalid("the header needs the kid of one of your JWT secrets (jwk_test_… or jwk_live_…)");
  const secret = await prisma.jwtSecret.findUnique({ where: { id: kid }, select: { merchantId: true, livemode: true, secret: true, revokedAt: true } });
  if (!secret || secret.revokedAt) throw invalid(`unknown kid '${kid}'`);
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, new TextEncoder().encode(secret.secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "iat", "email"],
      clockTolerance: CLOCK_SKEW_SECONDS,
    }));
  } catch (e) {
    throw invalid((e as Error).message);
  }
  const now = Math.floor(Date.now() / 1000);
  if ((payload.exp as number) > now + MAX_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) throw invalid("exp may be at most one hour ahead");
  if ((payload.iat as number) > now + CLOCK_SKEW_SECONDS) throw invalid("iat is in the future");
  const { email, name, phone } = payload;
  if (typeof email !== "string" || (name !== undefined && typeof name !== "string") || (phone !== undefined && typeof phone !== "string")) {
    throw invalid("email, name and phone claims must be strings");
  }
  // The claims become a customer's columns. A 400, not a 401: the token is genuine, its text is not storable.
  assertValidText({ email, name, phone }, "jwt");
  return { scope: { merchantId: secret.merchantId, livemode: secret.livemode }, claims: { email, name, phone } };
}
