// The hosted pages' own lane. A buyer's page is anonymous like any flood, yet its requests (the chain
// pick, the payment without gas, the live status) must not be shed with the flood. So each page the
// server renders carries a token, an HMAC of its charge id and an expiry under a server secret, that
// the page sends back (a header, or `page_token` where a browser cannot set one: a form's action, an
// EventSource's URL). Invariants:
// - A token is worth something only for its own charge, until its expiry: a request whose token is
//   missing, forged, expired or issued for another charge is an anonymous request like any other.
// - The lane has its own places (a share of the database beside the anonymous one) and is never
//   shed for a late event loop: a flood without tokens cannot take them. A flood with tokens needs
//   a charge per token, and each charge's requests spend a budget of their own.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { Bulkhead, Release } from "./bulkhead.js";
import type { RateLimiter } from "./rate-limit.js";

/** The header a page's script sends its token in. */
export const PAGE_TOKEN_HEADER = "stablegate-page-token";
/** The query parameter that carries it where no header can be set. */
export const PAGE_TOKEN_PARAM = "page_token";
/** How long after its charge's expiry a token still works: the page follows the charge to its end. */
const GRACE_MS = 15 * 60_000;

/**
 * What signs the tokens: `configured` (PAGE_TOKEN_SECRET), else one derived from the database's URL
 * with its password (a secret every API process of a deployment already shares), else none (each
 * process then draws its own: the embedded database has one process only).
 */
export function pageTokenSecret(configured: string | undefined, databaseUrl: string | undefined): string | undefined {
  if (configured) return configured;
  if (!databaseUrl || !new URL(databaseUrl).password) return undefined;
  return createHash("sha256").update(`stablegate page tokens\n${databaseUrl}`).digest("base64url");
}

/** Signs and checks the hosted pages' tokens, and admits their requests to the lane. */
export class HostedPages {
  private readonly secret: Buffer;

  constructor(
    secret: string | undefined,
    private readonly lane: Bulkhead,
    private readonly limiter: RateLimiter,
  ) {
    this.secret = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
  }

  /** The token of a page of `chargeId` rendered now, valid until shortly after `expiresAt`. */
  token(chargeId: string, expiresAt: Date | string, now = Date.now()): string {
    const until = Math.ceil((Math.max(new Date(expiresAt).getTime(), now) + GRACE_MS) / 1000);
    return `${chargeId}.${until}.${this.mac(chargeId, until)}`;
  }

  /** The charge `token` was issued for, or null when there is none, or it is malformed, forged or expired. */
  chargeOf(token: string | undefined, now = Date.now()): string | null {
    const parts = token?.split(".");
    if (parts?.length !== 3) return null;
    const [chargeId, until, mac] = parts as [string, string, string];
    if (!/^\d{1,12}$/.test(until) || Number(until) * 1000 < now) return null;
    const expected = Buffer.from(this.mac(chargeId, Number(until)));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected) ? chargeId : null;
  }

  /** Spends one unit of the charge's own budget (429 past it), then waits for a place in the lane. */
  async enter(chargeId: string): Promise<Release> {
    await this.limiter.consume(`page:${chargeId}`, "public");
    return this.lane.enter();
  }

  private mac(chargeId: string, until: number): string {
    return createHmac("sha256", this.secret).update(`${chargeId}.${until}`).digest("base64url");
  }
}

/** The page token a request carries: its header, else its `page_token` query parameter. */
export function pageTokenOf(headers: IncomingHttpHeaders, url: string): string | undefined {
  const header = headers[PAGE_TOKEN_HEADER];
  if (typeof header === "string") return header;
  const query = url.indexOf("?");
  return query < 0 ? undefined : (new URLSearchParams(url.slice(query + 1)).get(PAGE_TOKEN_PARAM) ?? undefined);
}
