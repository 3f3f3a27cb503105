// The security history (.docs/dashboard.md "Security history", src/domain/security-events.ts): a
// scripted session records each event with who, from where (address and browser) and when, in the
// transaction of its change; `securityEvents` pages and filters it for owners and admins only; the CSV
// download has the same filters; the worker deletes what is older than a year.
import { randomBytes } from "node:crypto";
import { getAddress } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR as NO_CONFIRMATION } from "../../src/domain/confirmation.js";
import { hashToken, newId } from "../../src/domain/ids.js";
import {
  deleteExpiredSecurityEvents,
  OPERATOR_ACTOR,
  recordSecurityEvent,
  SECURITY_EVENT_RETENTION_DAYS,
  SECURITY_EVENT_TYPES,
} from "../../src/domain/security-events.js";
import { SESSION_IDLE_MS } from "../../src/domain/sessions.js";
import { createUser } from "../../src/domain/users.js";
import { updateMerchant } from "../../src/domain/merchants.js";
import { startExpirySweep } from "../../src/jobs/expiry.js";
import { expectError, POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";

const PASSWORD = "correct horse battery";
const IP = "203.0.113.77";
const AGENT = "Mozilla/5.0 (X11; Linux x86_64) SecurityHistoryTest/1.0";
const OTHER_WALLET = getAddress("0x00000000000000000000000000000000000a11ce");

/** A signed-in browser: its cookie and CSRF token. */
interface Browser {
  cookie: string;
  csrf: string;
  userId: string;
}

let app: TestApp;
const run = randomBytes(4).toString("hex");
let n = 0;

beforeAll(async () => {
  app = await startApp({ ...POLLING, TRUST_PROXY: "1" });
}, 60_000);
afterAll(() => app?.stop());

const from = { "x-forwarded-for": IP, "user-agent": AGENT };

/** A user of the test merchant (or `merchantId`) with `role`. */
async function newUser(role: string, merchantId = app.merchant.merchant.id) {
  const user = await createUser(app.db.prisma, merchantId, { email: `sec${++n}-${run}@example.com`, password: PASSWORD }, NO_CONFIRMATION);
  await app.db.prisma.user.update({ where: { id: user.id }, data: { role } });
  return user;
}

const signIn = (body: Record<string, unknown>) => app.call("POST", "/dashboard/session", { key: null, body, headers: from });

async function browser(email: string): Promise<Browser> {
  const res = await signIn({ email, password: PASSWORD });
  expect(res.status, res.text).toBe(201);
  return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: res.body.csrfToken, userId: res.body.user.id };
}

async function gql(b: Browser, query: string, variables?: Record<string, unknown>) {
  const headers = { cookie: b.cookie, "x-csrf-token": b.csrf, ...from };
  return (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers })).body;
}

const LIST = `query($type: SecurityEventType, $userId: ID, $gte: String, $lt: String, $first: Int, $after: String) {
  securityEvents(type: $type, userId: $userId, createdGte: $gte, createdLt: $lt, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id type userId email ip userAgent detail createdAt } }
  }
}`;

/** The merchant's history rows, newest first. */
const rows = (merchantId = app.merchant.merchant.id) =>
  app.db.prisma.securityEvent.findMany({ where: { merchantId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });

describe("security history", () => {
  it("records a scripted session: sign-ins and failures, keys, the wallet, a webhook endpoint, sign-out, with user, address and browser", async () => {
    const merchant = await app.newMerchant();
    const merchantId = merchant.merchant.id;
    const owner = await newUser("owner", merchantId);
    const before = new Date();

    expectError(await signIn({ email: owner.email, password: "wrong password" }), 401, "sign_in_failed", "password");
    // An unknown email has no merchant: nothing is recorded, anywhere.
    const unknown = `nobody-${run}@example.com`;
    expectError(await signIn({ email: unknown, password: PASSWORD }), 401, "sign_in_failed", "password");
    expect(await app.db.prisma.securityEvent.count({ where: { email: unknown } })).toBe(0);

    const b = await browser(owner.email);
    const created = await gql(b, `mutation($p: String) { createApiKey(password: $p) { apiKey { id last4 } } }`, { p: PASSWORD });
    expect(created.errors).toBeUndefined();
    const keyId = created.data.createApiKey.apiKey.id;
    const rolled = await gql(b, `mutation($id: ID!, $p: String) { rollApiKey(id: $id, overlapHours: 0, password: $p) { apiKey { id last4 } } }`, {
      id: keyId,
      p: PASSWORD,
    });
    expect(rolled.errors).toBeUndefined();
    const newKeyId = rolled.data.rollApiKey.apiKey.id;
    expect((await gql(b, `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: newKeyId })).errors).toBeUndefined();
    const wallet = await gql(b, `mutation($w: String, $p: String) { updateMerchantSettings(input: { testWallet: $w, password: $p }) { testWallet } }`, {
      w: OTHER_WALLET,
      p: PASSWORD,
    });
    expect(wallet.errors).toBeUndefined();
    const endpoint = await gql(b, `mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:9/a" }) { endpoint { id } } }`);
    expect(endpoint.errors).toBeUndefined();
    const endpointId = endpoint.data.createWebhookEndpoint.endpoint.id;
    const pause = () => gql(b, `mutation($id: ID!) { updateWebhookEndpoint(id: $id, input: { status: DISABLED }) { id } }`, { id: endpointId });
    expect((await pause()).errors).toBeUndefined();
    // Sent again, it changes nothing, and leaves no record.
    expect((await pause()).errors).toBeUndefined();
    expect(
      (await gql(b, `mutation($id: ID!) { rotateWebhookEndpointSecret(id: $id, overlapHours: 0) { secret } }`, { id: endpointId })).errors,
    ).toBeUndefined();
    expect((await gql(b, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id } }`, { id: endpointId })).errors).toBeUndefined();
    const out = await app.call("DELETE", "/dashboard/session", { key: null, headers: { cookie: b.cookie, "x-csrf-token": b.csrf, ...from } });
    expect(out.status).toBe(204);

    const history = (await rows(merchantId)).filter((e) => e.createdAt >= before).reverse();
    expect(history.map((e) => [e.type, (e.detail as { action?: string } | null)?.action ?? null])).toEqual([
      ["sign_in_failed", null],
      ["sign_in", null],
      ["api_key_created", null],
      ["api_key_rolled", null],
      ["api_key_revoked", null],
      ["wallet_changed", null],
      ["webhook_endpoint_changed", "created"],
      ["webhook_endpoint_changed", "disabled"],
      ["webhook_endpoint_changed", "secret_rotated"],
      ["webhook_endpoint_changed", "deleted"],
      ["sign_out", null],
    ]);
    for (const e of history) expect(e, e.type).toMatchObject({ userId: owner.id, email: owner.email, ip: IP, userAgent: AGENT });
    const [failed, signedIn, key, roll, revoked, walletChanged, endpointCreated] = history;
    expect(failed!.detail).toEqual({ reason: "wrong_password" });
    expect(signedIn!.detail).toEqual({ mode: "test", newDevice: true });
    const last4 = (await app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).last4;
    expect(key!.detail).toEqual({ keyId, mode: "test", last4 });
    expect(roll!.detail).toMatchObject({ keyId, mode: "test", last4, newKeyId });
    expect(revoked!.detail).toMatchObject({ keyId: newKeyId, mode: "test" });
    expect(walletChanged!.detail).toEqual({ mode: "test", from: WALLET, to: OTHER_WALLET });
    expect(endpointCreated!.detail).toMatchObject({ endpointId, action: "created", url: "http://127.0.0.1:9/a", mode: "test" });
    // No secret ever reaches the history.
    expect(JSON.stringify(history)).not.toMatch(/sk_(test|live)_|whsec_/);
  });

  it("records the command line's changes with no user, and the failures of two-factor and of a locked-out email", async () => {
    const merchant = await app.newMerchant();
    const merchantId = merchant.merchant.id;
    await updateMerchant(app.db.prisma, merchantId, { liveWallet: OTHER_WALLET }, undefined, OPERATOR_ACTOR);
    const [changed] = await rows(merchantId);
    expect(changed).toMatchObject({ type: "wallet_changed", userId: null, email: null, ip: null, detail: { mode: "live", from: WALLET, to: OTHER_WALLET } });
    // Merchant creation made its two keys as the operator.
    expect((await rows(merchantId)).filter((e) => e.type === "api_key_created")).toHaveLength(2);

    const locked = await newUser("viewer", merchantId);
    for (let i = 0; i < 5; i++) expectError(await signIn({ email: locked.email, password: "wrong password" }), 401, "sign_in_failed");
    expectError(await signIn({ email: locked.email, password: PASSWORD }), 429, "rate_limited");
    // More attempts at a locked email cost the guesser nothing: they are recorded once per lock window.
    for (let i = 0; i < 3; i++) expectError(await signIn({ email: locked.email, password: PASSWORD }), 429, "rate_limited");
    const reasons = (await rows(merchantId)).filter((e) => e.userId === locked.id).map((e) => (e.detail as { reason: string }).reason);
    expect(reasons).toEqual(["locked", ...Array(5).fill("wrong_password")]);

    const twoFactor = await newUser("viewer", merchantId);
    await app.db.prisma.user.update({ where: { id: twoFactor.id }, data: { totpSecret: "JBSWY3DPEHPK3PXP" } });
    expectError(await signIn({ email: twoFactor.email, password: PASSWORD }), 401, "totp_required", "totpCode");
    expectError(await signIn({ email: twoFactor.email, password: PASSWORD, totpCode: "000000" }), 401, "sign_in_failed", "totpCode");
    const twoFactorReasons = (await rows(merchantId)).filter((e) => e.userId === twoFactor.id).map((e) => (e.detail as { reason: string }).reason);
    expect(twoFactorReasons).toEqual(["wrong_two_factor_code", "two_factor_code_missing"]);
  });

  it("records a session ended by idling (found on use, or swept at a sign-in) and a password reset by link", async () => {
    const merchant = await app.newMerchant();
    const merchantId = merchant.merchant.id;
    const user = await newUser("admin", merchantId);
    const idle = async (b: Browser) =>
      app.db.prisma.dashboardSession.updateMany({ where: { userId: b.userId }, data: { lastSeenAt: new Date(Date.now() - SESSION_IDLE_MS - 60_000) } });

    const first = await browser(user.email);
    await idle(first);
    expectError(await app.call("GET", "/dashboard/session", { key: null, headers: { cookie: first.cookie, ...from } }), 401, "session_invalid");
    const second = await browser(user.email);
    await idle(second);
    await browser(user.email);
    const expired = (await rows(merchantId)).filter((e) => e.type === "session_expired");
    expect(expired).toHaveLength(2);
    for (const e of expired) expect(e).toMatchObject({ userId: user.id, email: user.email, detail: { reason: "idle" } });

    const token = `reset-${randomBytes(16).toString("hex")}`;
    await app.db.prisma.passwordReset.create({
      data: { id: newId("pwr"), userId: user.id, tokenHash: hashToken(token), expiresAt: new Date(Date.now() + 3_600_000) },
    });
    const reset = await app.call("POST", "/dashboard/password/reset", { key: null, body: { token, password: "another good password" }, headers: from });
    expect(reset.status, reset.text).toBe(200);
    const [latest] = await rows(merchantId);
    expect(latest).toMatchObject({ type: "password_reset", userId: user.id, email: user.email, ip: IP, userAgent: AGENT });
  });

  it("lists the history to owners and admins, newest first, paged and filtered; other roles and API keys are refused", async () => {
    const merchant = await app.newMerchant();
    const merchantId = merchant.merchant.id;
    const owner = await newUser("owner", merchantId);
    const admin = await newUser("admin", merchantId);
    const ob = await browser(owner.email);
    const ab = await browser(admin.email);
    // Older events of each type, written directly: every type the history knows is listed and filtered.
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    for (const [i, type] of SECURITY_EVENT_TYPES.entries()) {
      await recordSecurityEvent(
        app.db.prisma,
        merchantId,
        type,
        { userId: owner.id, email: null, ip: "198.51.100.1", userAgent: "Old" },
        { i },
        new Date(t0 + i * 60_000),
      );
    }

    const all = await gql(ab, LIST, { first: 100 });
    expect(all.errors).toBeUndefined();
    const nodes = all.data.securityEvents.edges.map((e: { node: unknown }) => e.node);
    // Each type once, the two keys made with the merchant, the two users joining, the two sign-ins.
    expect(all.data.securityEvents.totalCount).toBe(SECURITY_EVENT_TYPES.length + 6);
    expect(nodes.slice(0, 2).map((e: { type: string }) => e.type)).toEqual(["SIGN_IN", "SIGN_IN"]);
    expect(nodes.at(-1)).toMatchObject({ type: "SIGN_IN", userId: owner.id, email: owner.email, ip: "198.51.100.1", userAgent: "Old", detail: { i: 0 } });
    const times = nodes.map((e: { createdAt: string }) => Date.parse(e.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    // Pages of 5 walk the whole list once.
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await gql(ob, LIST, { first: 5, after })).data.securityEvents;
      seen.push(...page.edges.map((e: { node: { id: string } }) => e.node.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(nodes.map((e: { id: string }) => e.id));

    for (const type of SECURITY_EVENT_TYPES) {
      const only = (await gql(ob, LIST, { type: type.toUpperCase(), gte: "2026-01-01T00:00:00Z", lt: "2026-02-01T00:00:00Z" })).data.securityEvents;
      expect(only.totalCount, type).toBe(1);
      expect(only.edges[0].node.type).toBe(type.toUpperCase());
    }
    const admins = (await gql(ob, LIST, { userId: admin.id })).data.securityEvents;
    expect(admins.edges.map((e: { node: { type: string; userId: string } }) => [e.node.type, e.node.userId])).toEqual([["SIGN_IN", admin.id]]);
    const range = (await gql(ob, LIST, { gte: new Date(t0 + 60_000).toISOString(), lt: new Date(t0 + 3 * 60_000).toISOString() })).data.securityEvents;
    expect(range.edges.map((e: { node: { type: string } }) => e.node.type)).toEqual(["SIGN_OUT", "SIGN_IN_FAILED"]);
    const bad = await gql(ob, LIST, { gte: "yesterday" });
    expect(bad.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "createdGte" });

    for (const role of ["developer", "support", "viewer"]) {
      const refused = await gql(await browser((await newUser(role, merchantId)).email), LIST, {});
      expect(refused.errors[0].extensions.code, role).toBe("permission_denied");
      expect(refused.data).toBeNull();
    }
    const byKey = await app.gql(LIST, {}, merchant.apiKeys.test.secret);
    expect(byKey.errors![0].extensions.code).toBe("session_required");
  });

  it("downloads the history as CSV with the same filters, for owners and admins only", async () => {
    const merchant = await app.newMerchant();
    const merchantId = merchant.merchant.id;
    const owner = await newUser("owner", merchantId);
    const ob = await browser(owner.email);
    await recordSecurityEvent(
      app.db.prisma,
      merchantId,
      "wallet_changed",
      { userId: owner.id, email: null, ip: "198.51.100.2", userAgent: "=cmd|' /C calc'!A0" },
      {
        mode: "live",
        from: null,
        to: OTHER_WALLET,
      },
    );
    const download = (query: string, cookie = ob.cookie) =>
      app.call("GET", `/dashboard/security-events.csv${query}`, { key: null, headers: { cookie, ...from } });

    const res = await download("");
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="security_events.csv"');
    const lines = res.text.trimEnd().split("\r\n");
    expect(lines[0]).toBe("id,createdAt,type,userId,email,ip,userAgent,detail");
    // The header, the wallet change, the sign-in, the user joining, the two keys made with the merchant.
    expect(lines).toHaveLength(6);
    expect(lines[1]).toContain(",wallet_changed,");
    // A user agent that a spreadsheet would run is written as text; the detail is its JSON, quoted.
    expect(lines[1]).toContain(`,'=cmd|' /C calc'!A0,"{`);
    expect(lines[1]).toContain(`""to"": ""${OTHER_WALLET}""`.replace(": ", ":"));
    expect(lines[2]).toMatch(new RegExp(`,sign_in,${owner.id},${owner.email},${IP},`));

    const filtered = (await download("?type=sign_in")).text.trimEnd().split("\r\n");
    expect(filtered.slice(1).map((l) => l.split(",")[2])).toEqual(["sign_in"]);
    expect((await download(`?userId=${owner.id}&createdLt=2000-01-01T00:00:00Z`)).text).toBe("id,createdAt,type,userId,email,ip,userAgent,detail\r\n");
    expectError(await download("?type=nonsense"), 400, "parameter_invalid", "type");
    expectError(await download("?limit=5"), 400, "parameter_unknown");
    expectError(await download("", "sg_session=sgs_notarealsession"), 401, "session_invalid");
    const viewer = await browser((await newUser("viewer", merchantId)).email);
    expectError(await download("", viewer.cookie), 403, "permission_denied");
  });

  it("keeps a year: the worker's expiry sweep deletes older events in batches", async () => {
    const merchant = await app.newMerchant();
    const merchantId = merchant.merchant.id;
    // Long ago, so that only this test's events are older than a year before `now`.
    const now = new Date("2025-06-01T00:00:00Z");
    const old = now.getTime() - SECURITY_EVENT_RETENTION_DAYS * 86_400_000;
    const write = async () => {
      for (let i = 0; i < 5; i++) await recordSecurityEvent(app.db.prisma, merchantId, "sign_out", OPERATOR_ACTOR, { i }, new Date(old - (i + 1) * 1000));
    };
    const sweepable = () => app.db.prisma.securityEvent.count({ where: { merchantId, type: "sign_out" } });
    await write();
    await recordSecurityEvent(app.db.prisma, merchantId, "sign_out", OPERATOR_ACTOR, { kept: true }, new Date(old + 1000));
    const counts: number[] = [];
    for (;;) {
      const deleted = await deleteExpiredSecurityEvents(app.db.prisma, now, 2);
      counts.push(deleted);
      if (deleted < 2) break;
    }
    expect(counts).toEqual([2, 2, 1]);
    expect((await rows(merchantId)).filter((e) => e.type === "sign_out").map((e) => e.detail)).toEqual([{ kept: true }]);

    // The worker's sweep does it, batch after batch, in one run.
    await write();
    expect(await sweepable()).toBe(6);
    const sweep = startExpirySweep(app.db.prisma, app.settings, pino({ level: "silent" }), { intervalMs: 60_000, now: () => now, batchSize: 2 });
    await until("the sweep down to the one kept", async () => (await sweepable()) <= 1);
    await sweep.stop();
    expect(await sweepable()).toBe(1);
  });
});
