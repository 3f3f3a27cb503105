// The hosted pages' lane (src/http/hosted-pages.ts): a page's own requests, with the token the page
// was rendered with, pass an anonymous flood that is being shed; a forged token, an expired one, or one
// of another charge buys nothing.
import { connect } from "node:net";
import { parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { Bulkhead } from "../../src/http/bulkhead.js";
import { HostedPages, PAGE_TOKEN_HEADER, pageTokenSecret } from "../../src/http/hosted-pages.js";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { onlyAbout } from "../../src/graphql/rate-limit.js";
import { getOperationAST, type OperationDefinitionNode } from "graphql";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";

const LIMITS = { create: 100, read: 100, list: 100, public: 3, authFailures: 100, gasless: 100, x402: 100 };

describe("page tokens", () => {
  const pages = new HostedPages("a".repeat(32), new Bulkhead(1, 1), new RateLimiter(LIMITS));
  const expires = new Date(Date.now() + 60_000);

  it("name the charge they were issued for, until shortly after it expires", () => {
    const token = pages.token("chrg_a", expires);
    expect(pages.chargeOf(token)).toBe("chrg_a");
    expect(pages.chargeOf(token, expires.getTime() + 14 * 60_000)).toBe("chrg_a");
    expect(pages.chargeOf(token, expires.getTime() + 16 * 60_000)).toBeNull();
  });

  it("are worth nothing forged, altered, moved to another charge, or signed with another secret", () => {
    const token = pages.token("chrg_a", expires);
    const [, until, mac] = token.split(".");
    expect(pages.chargeOf(undefined)).toBeNull();
    expect(pages.chargeOf("")).toBeNull();
    expect(pages.chargeOf(`chrg_b.${until}.${mac}`)).toBeNull();
    expect(pages.chargeOf(`chrg_a.${Number(until) + 3600}.${mac}`)).toBeNull();
    expect(pages.chargeOf(`chrg_a.${until}.${mac!.slice(0, -2)}AA`)).toBeNull();
    expect(pages.chargeOf(`chrg_a.${until}.${mac}.x`)).toBeNull();
    const other = new HostedPages("b".repeat(32), new Bulkhead(1, 1), new RateLimiter(LIMITS));
    expect(other.chargeOf(token)).toBeNull();
    // Without PAGE_TOKEN_SECRET each process draws its own.
    expect(new HostedPages(undefined, new Bulkhead(1, 1), new RateLimiter(LIMITS)).chargeOf(token)).toBeNull();
  });

  it("are signed alike by every process of a deployment: PAGE_TOKEN_SECRET, else derived from the database URL's password", () => {
    const url = "postgresql://app:s3cret@db:5432/stablegate";
    expect(pageTokenSecret("x".repeat(32), url)).toBe("x".repeat(32));
    const derived = pageTokenSecret(undefined, url);
    expect(derived).toBe(pageTokenSecret(undefined, url));
    expect(derived).not.toContain("s3cret");
    expect(derived).not.toBe(pageTokenSecret(undefined, "postgresql://app:other@db:5432/stablegate"));
    // Nothing shared to derive it from: each process draws its own.
    expect(pageTokenSecret(undefined, "postgresql://app@db:5432/stablegate")).toBeUndefined();
    expect(pageTokenSecret(undefined, undefined)).toBeUndefined();
  });

  it("each charge's requests spend a budget of their own", async () => {
    const lane = new HostedPages(undefined, new Bulkhead(10, 10), new RateLimiter(LIMITS));
    for (let i = 0; i < 3; i++) (await lane.enter("chrg_busy"))();
    await expect(lane.enter("chrg_busy")).rejects.toMatchObject({ code: "rate_limited" });
    (await lane.enter("chrg_other"))();
  });

  it("count in GraphQL only for an operation about their charge and nothing else", () => {
    const op = (text: string) => getOperationAST(parse(text)) as OperationDefinitionNode;
    const follow = op("subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { status } }");
    expect(onlyAbout(follow, { id: "chrg_a" }, "chrg_a")).toBe(true);
    expect(onlyAbout(follow, { id: "chrg_b" }, "chrg_a")).toBe(false);
    expect(onlyAbout(op('{ paymentSession(chargeId: "chrg_a") { status } }'), {}, "chrg_a")).toBe(true);
    expect(onlyAbout(op('{ paymentSession(chargeId: "chrg_a") { status } customers(first: 1) { edges { cursor } } }'), {}, "chrg_a")).toBe(false);
    expect(onlyAbout(op('{ a: paymentSession(chargeId: "chrg_a") { status } b: paymentSession(chargeId: "chrg_b") { status } }'), {}, "chrg_a")).toBe(false);
  });
});

describe("under an anonymous flood", () => {
  let chain: TestChain;
  let app: TestApp;

  beforeAll(async () => {
    chain = await startTestChain();
    // Two connections: one anonymous place, and 200 more may wait for it.
    app = await startApp({ ...POLLING, DATABASE_POOL_SIZE: "2" }, { chains: new ChainSet([await chain.enabled(1)]) });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await chain?.stop();
  });

  let seq = 0;
  const newCharge = async (): Promise<string> => {
    const res = await app.call("POST", "/v1/charges", { body: { orderId: `lane-${++seq}`, amount: "25" } });
    expect(res.status, res.text).toBe(201);
    return res.body.id;
  };
  const tokenOf = async (chargeId: string): Promise<string> => {
    const html = await (await fetch(`${app.url}/pay/${chargeId}`)).text();
    return /"pageToken":"([^"]+)"/.exec(html)![1]!;
  };
  /** Takes the anonymous place and fills the queue behind it, as a flood in full swing does; gives them back when called. */
  const saturate = async () => {
    const held = await app.anonymous.enter();
    const waiting = Array.from({ length: 200 }, () => app.anonymous.enter());
    return async () => {
      held();
      for (const w of waiting) (await w)();
    };
  };
  const view = (chargeId: string, token?: string) =>
    fetch(`${app.url}/v1/public/charges/${chargeId}`, { headers: token ? { [PAGE_TOKEN_HEADER]: token } : {} }).then((r) => r.status);
  const QUERY = encodeURIComponent("query($id: ID!) { paymentSession(chargeId: $id) { status } }");
  const session = (chargeId: string, token?: string) =>
    fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { [PAGE_TOKEN_HEADER]: token } : {}) },
      body: JSON.stringify({ query: "query($id: ID!) { paymentSession(chargeId: $id) { status } }", variables: { id: chargeId } }),
    }).then(statusOf);
  // As an EventSource asks: the token in the URL.
  const sessionByUrl = (chargeId: string, token: string) =>
    fetch(`${app.url}/graphql?query=${QUERY}&variables=${encodeURIComponent(JSON.stringify({ id: chargeId }))}&page_token=${encodeURIComponent(token)}`).then(
      statusOf,
    );
  const pick = (chargeId: string, token: string) =>
    fetch(`${app.url}/pay/${chargeId}/chain?page_token=${encodeURIComponent(token)}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "chainId=31337",
    }).then((r) => r.status);

  it("a page's own requests pass while anonymous ones are shed; a forged token or another charge's does not skip", async () => {
    const [mine, other] = [await newCharge(), await newCharge()];
    const [token, otherToken] = [await tokenOf(mine), await tokenOf(other)];
    const [, until, mac] = token.split(".");
    const forged = `${mine}.${until}.${mac!.slice(0, -3)}abc`;

    const release = await saturate();
    try {
      const flood = await Promise.all(Array.from({ length: 100 }, () => view(mine)));
      const own = await Promise.all([view(mine, token), session(mine, token), sessionByUrl(mine, token), pick(mine, token)]);
      const borrowed = await Promise.all([view(mine, forged), view(mine, otherToken), session(mine, otherToken), session(mine, forged), session(mine)]);
      expect(flood.every((s) => s === 429)).toBe(true);
      expect(own).toEqual([200, 200, 200, 303]);
      expect(borrowed).toEqual([429, 429, 429, 429, 429]);
      // The page itself: with its token it is drawn; its first load (no token yet) is refused, and loads itself again after Retry-After.
      expect((await fetch(`${app.url}/pay/${mine}?page_token=${encodeURIComponent(token)}`)).status).toBe(200);
      const refused = await fetch(`${app.url}/pay/${mine}`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(await refused.text()).toContain('<meta http-equiv="refresh" content="1">');
      // A form post refused is not posted again by a refresh (the page's script retries it).
      const post = await fetch(`${app.url}/pay/${other}/chain`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "chainId=31337",
      });
      expect(post.status).toBe(429);
      expect(await post.text()).not.toContain("http-equiv");
    } finally {
      await release();
    }
    // The pick was made; with the flood gone, anonymous requests are served again.
    expect((await app.call("GET", `/v1/charges/${mine}`)).body.chainId).toBe(31337);
    expect(await view(mine)).toBe(200);
  }, 60_000);

  it("a page's request its browser abandons mid-way (a page drawn again twice in a row) gives its place back", async () => {
    const mine = await newCharge();
    const token = await tokenOf(mine);
    const { port } = new URL(app.url);
    const path = `/pay/${mine}?page_token=${encodeURIComponent(token)}`;
    // Each goes away once its request is read and the handler has begun: the lane has one place here.
    // Kept: the delays are the point, each abandons the request at another moment of its handling.
    for (const ms of [0, 1, 2, 4, 8, 16, 32]) {
      const socket = connect(Number(port), "127.0.0.1");
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await new Promise((r) => setTimeout(r, ms));
      socket.destroy();
    }
    // Served (waiting in the lane's queue if need be) only once every abandoned one gave its place back.
    const release = await saturate();
    try {
      expect((await fetch(`${app.url}${path}`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
    } finally {
      await release();
    }
  }, 60_000);
});

/** 200 for a GraphQL answer without errors, else the error's status (429 when refused as busy). */
async function statusOf(res: Response): Promise<number> {
  const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
  if (res.status !== 200) return res.status;
  return body.errors?.[0]?.extensions?.code === "rate_limited" ? 429 : body.errors ? 500 : 200;
}
