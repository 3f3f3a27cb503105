// Persisted operations: the dashboard build hashes every operation of the dashboard (with the
// fragments it spreads) into dist/dashboard/persisted-operations.json and the bundle; a hash runs its
// operation; an unknown hash is PersistedQueryNotFound; in production a dashboard session runs hashes
// only, while an API key (and a caller without one) may still send any operation's text.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { type ASTNode, type DefinitionNode, getOperationAST, Kind, parse, print, visit } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { startApp, type TestApp } from "../helpers/harness.js";
import { subscribe, wsClient } from "../helpers/live.js";

const DIST = new URL("../../dist/dashboard/", import.meta.url);
const WEB = new URL("../../src/dashboard/web/", import.meta.url);
const PASSWORD = "correct horse battery";

const manifest = JSON.parse(readFileSync(new URL("persisted-operations.json", DIST), "utf8")) as Record<string, string>;
/** The hash of the dashboard's operation named `name`. */
const hashOf = (name: string) => Object.entries(manifest).find(([, text]) => getOperationAST(parse(text))?.name?.value === name)![0];
const persisted = (hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });

describe("the dashboard build", () => {
  // graphql(`…`), or graphql(`…`, [fragments]) for one that spreads fragments (as prettier lays it out).
  const definitions = readdirSync(WEB, { recursive: true, encoding: "utf8" })
    .filter((file) => /\.tsx?$/.test(file))
    .flatMap((file) =>
      [...readFileSync(new URL(file, WEB), "utf8").matchAll(/graphql\(\s*`([\s\S]*?)`(?:\s*,\s*\[[\w\s,]*\])?\s*,?\s*\)/g)].flatMap(
        (m) => parse(m[1]!).definitions,
      ),
    );
  const fragments = new Map(definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  /** An operation as the server runs it: the operation, then every fragment it spreads (transitively), by name. */
  const whole = (operation: DefinitionNode) => {
    const names = new Set<string>();
    const spreads = (node: ASTNode) =>
      visit(node, {
        FragmentSpread: (spread) => {
          if (names.has(spread.name.value)) return;
          names.add(spread.name.value);
          spreads(fragments.get(spread.name.value)!);
        },
      });
    spreads(operation);
    return print({ kind: Kind.DOCUMENT, definitions: [operation, ...[...names].sort().map((n) => fragments.get(n)!)] });
  };
  const documents = definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).map(whole);
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

  it("writes every operation of the dashboard to the manifest, with the fragments it spreads, under the sha256 of its text", () => {
    expect(fragments.size).toBeGreaterThanOrEqual(6);
    expect(documents.filter((text) => text.includes("\nfragment ")).length).toBeGreaterThanOrEqual(6);
    expect(documents.length).toBeGreaterThanOrEqual(40);
    for (const text of documents) expect(manifest[sha256(text)], text.split("\n")[0]).toBe(text);
    expect(Object.keys(manifest).sort()).toEqual([...new Set(documents.map(sha256))].sort());
  });

  it("puts the hashes in the bundle (the entry and the pages' chunks), which is what the dashboard sends", () => {
    const chunks = readdirSync(new URL("assets/chunks/", DIST)).map((name) => readFileSync(new URL(`assets/chunks/${name}`, DIST), "utf8"));
    const bundle = [readFileSync(new URL("assets/app.js", DIST), "utf8"), ...chunks].join("\n");
    for (const hash of Object.keys(manifest)) expect(bundle).toContain(hash);
  });
});

/** A signed-in dashboard browser of `app`'s merchant: its cookie and CSRF token. */
async function signedIn(app: TestApp): Promise<{ cookie: string; csrf: string }> {
  const user = await createUser(app.db.prisma, app.merchant.merchant.id, { email: `pq-${Date.now()}@example.com`, password: PASSWORD }, OPERATOR);
  const res = await app.call("POST", "/dashboard/session", { key: null, body: { email: user.email, password: PASSWORD } });
  expect(res.status, res.text).toBe(201);
  return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: res.body.csrfToken };
}

/** POSTs `body` to /graphql as the session (cookie and CSRF header), or with an API key. */
async function post(app: TestApp, body: object, as: { cookie: string; csrf: string } | string | null) {
  const headers: Record<string, string> = typeof as === "object" && as !== null ? { cookie: as.cookie, "x-csrf-token": as.csrf } : {};
  return app.call("POST", "/graphql", { key: typeof as === "string" ? as : null, body, headers });
}

const STATS = "query HomeStats { chargeStats(days: 30) { days } }";

describe("outside production", () => {
  let app: TestApp;
  let session: { cookie: string; csrf: string };
  beforeAll(async () => {
    app = await startApp();
    session = await signedIn(app);
  });
  afterAll(() => app?.stop());

  it("runs a persisted operation by its hash, over POST and GET", async () => {
    const hash = hashOf("HomeStats");
    for (const as of [app.testKey, session]) {
      const res = await post(app, persisted(hash), as);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ data: { chargeStats: expect.objectContaining({ days: 30 }) } });
    }
    const get = await app.call("GET", `/graphql?extensions=${encodeURIComponent(JSON.stringify(persisted(hash).extensions))}`);
    expect(get.status, get.text).toBe(200);
    expect(get.body.data.chargeStats.days).toBe(30);
  });

  it("answers an unknown hash with PersistedQueryNotFound, and a request with neither text nor hash with parameter_missing", async () => {
    const unknown = await post(app, persisted("0".repeat(64)), app.testKey);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      {
        message: "PersistedQueryNotFound",
        extensions: { code: "PERSISTED_QUERY_NOT_FOUND", param: "extensions.persistedQuery.sha256Hash", statusCode: 400 },
      },
    ]);
    const neither = await post(app, { variables: {} }, app.testKey);
    expect(neither.status).toBe(400);
    expect(neither.body.errors[0].extensions).toEqual({ code: "parameter_missing", param: "query", statusCode: 400 });
  });

  it("lets a dashboard session send an operation's text", async () => {
    const res = await post(app, { query: STATS }, session);
    expect(res.body).toEqual({ data: { chargeStats: { days: 30 } } });
  });
});

describe("in production", () => {
  let app: TestApp;
  let session: { cookie: string; csrf: string };
  beforeAll(async () => {
    app = await startApp({ NODE_ENV: "production" });
    session = await signedIn(app);
  });
  afterAll(() => app?.stop());

  it("runs a dashboard session's persisted operations, and refuses its text", async () => {
    const byHash = await post(app, persisted(hashOf("HomeStats")), session);
    expect(byHash.body).toEqual({ data: { chargeStats: expect.objectContaining({ days: 30 }) } });
    const text = await post(app, { query: STATS }, session);
    expect(text.status).toBe(400);
    expect(text.body.errors).toEqual([expect.objectContaining({ extensions: { code: "PERSISTED_QUERY_ID_REQUIRED", param: "query", statusCode: 400 } })]);
  });

  it("lets an API key, and a caller without one, send any operation's text", async () => {
    expect((await post(app, { query: STATS }, app.testKey)).body).toEqual({ data: { chargeStats: { days: 30 } } });
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "pq-1", amount: "5.00" } })).body;
    const anonymous = await post(app, { query: `{ paymentSession(chargeId: "${charge.id}") { id } }` }, null);
    expect(anonymous.body).toEqual({ data: { paymentSession: { id: charge.id } } });
  });

  it("holds over WebSocket too: a session subscribes by hash, not by text", async () => {
    const client = wsClient(app.url, undefined, { cookie: session.cookie }, { "X-CSRF-Token": session.csrf });
    const byText = subscribe(client, "subscription { chargeEvents { id type } }");
    await byText.ended();
    expect((byText.errors[0] as { extensions: unknown }[])[0]!.extensions).toEqual({ code: "PERSISTED_QUERY_ID_REQUIRED", param: "query", statusCode: 400 });

    const live: unknown[] = [];
    const dispose = client.subscribe(
      { query: "", ...persisted(hashOf("ChargeEvents")) },
      { next: (r) => void live.push(r), error: (e) => void live.push(e), complete: () => {} },
    );
    // The subscription is live once it sees a charge made after it started.
    await expect
      .poll(
        async () => {
          await app.call("POST", "/v1/charges", { body: { orderId: `pq-ws-${Date.now()}`, amount: "5.00" } });
          return live.length;
        },
        { timeout: 5000, interval: 200 },
      )
      .toBeGreaterThan(0);
    expect(live[0]).toEqual({ data: { chargeEvents: expect.objectContaining({ type: "charge.pending" }) } });
    dispose();
    expect(client.closes).toEqual([]);
    await client.dispose();
  });
});

describe("in production, a browser holding a dashboard cookie", () => {
  let app: TestApp;
  let session: { cookie: string; csrf: string };
  beforeAll(async () => {
    // A small failed-authentication budget on an address of the app's own (TRUST_PROXY), to see that
    // the hosted page's requests spend none of it.
    app = await startApp({ NODE_ENV: "production", TRUST_PROXY: "true", RATE_LIMIT_AUTH_FAILURES: "10" });
    session = await signedIn(app);
  });
  afterAll(() => app?.stop());

  it("runs the hosted payment page's text without the CSRF header, counting no failed authentication", async () => {
    const charge = (await app.call("POST", "/v1/charges", { body: { orderId: "pq-cookie", amount: "5.00" } })).body;
    const query = `{ paymentSession(chargeId: "${charge.id}") { id } }`;
    // More times than the address's failed-authentication budget (10) allows.
    for (let i = 0; i < 15; i++) {
      const res = await app.call("POST", "/graphql", { key: null, body: { query }, headers: { cookie: session.cookie } });
      expect(res.body, res.text).toEqual({ data: { paymentSession: { id: charge.id } } });
    }
    // The cookie alone still opens nothing of the merchant's.
    const merchant = await app.call("POST", "/graphql", { key: null, body: { query: STATS }, headers: { cookie: session.cookie } });
    expect(merchant.body.errors[0].extensions).toMatchObject({ code: "csrf_token_invalid", param: "X-CSRF-Token" });
    expect((await post(app, persisted(hashOf("HomeStats")), session)).body.data.chargeStats.days).toBe(30);
  });
});
