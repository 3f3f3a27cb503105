// Per-request GraphQL context: the database and the caller, resolved once from X-API-Key.

import type { Prisma } from "../db/client.js";
import type { ChainSet } from "../chain/chains.js";
import type { ApiKeyAuthenticator } from "../domain/api-keys.js";
import type { ChargeSettings } from "../domain/charges.js";
import { AppError } from "../domain/errors.js";
import type { Principal, Scope } from "../domain/scope.js";

export interface GraphQLContext {
  prisma: Prisma;
  charges: ChargeSettings;
  chains: ChainSet;
  /** The key's principal, or null for an anonymous request. */
  principal: Principal | null;
  /** The caller's merchant and mode; throws the 401 AppError when the request has no valid key. */
  scope(): Scope;
}

/** Builds the context of one request from its X-API-Key header. */
export async function createContext(
  { prisma, authenticator, charges, chains }: { prisma: Prisma; authenticator: ApiKeyAuthenticator; charges: ChargeSettings; chains: ChainSet },
  apiKey: string | null,
): Promise<GraphQLContext> {
  let principal: Principal | null = null;
  let failure: unknown = null;
  try {
    principal = await authenticator.authenticate(apiKey ?? undefined);
  } catch (e) {
    // Only operations that need a merchant fail; public ones still run.
    if (!(e instanceof AppError)) throw e;
    failure = e;
  }
  return {
    prisma,
    charges,
    chains,
    principal,
    scope() {
      if (!principal) throw failure;
      return { merchantId: principal.merchantId, livemode: principal.livemode };
    },
  };
}
