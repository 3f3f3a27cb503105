// Dashboard users and sessions (.docs/dashboard.md "Sign-in and sessions"): sign-in with lock-out and TOTP, the
// cookie's attributes, GraphQL with a session (CSRF header, same origin, session-only settings), one
// merchant's session against another's records, sign-out (everywhere) and the idle limit.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clearedSessionCookie, sessionCookie } from "../../src/dashboard/session-cookie.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createApiKey } from "../../src/domain/api-keys.js";
import { verifyPassword } from "../../src/domain/passwords.js";
import { totpCode } from "../../src/domain/totp.js";
import { createUser } from "../../src/domain/users.js";
import { expectError, POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { subscribe, subscribed, wsClient } from "../helpers/live.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";

const PASSWORD = "correct horse battery";

/** A signed-in browser: its cookie and CSRF token. */
interface Browser {
  cookie: string;
  csrf: string;
  sessionId: string;
}

describe("dashboard sessions", () => {
  let app: TestApp;
  let n = 0;
  beforeAll(async () => {
    app = await startApp(POLLING);
  }, 60_000);
  afterAll(() => app?.stop());

  // Random emails: on Redis the sign-in counters outlive the run, and other runs share them.
  const run = randomBytes(4).toString("hex");
  const newUser = async (merchantId = app.merchant.merchant.id) =>
    createUser(app.db.prisma, merchantId, { email: `user${++n}-${run}@Example.com`, password: PASSWORD }, OPERATOR);
  const signIn = (body: Record<string, unknown>, headers: Record<string, string> = {}) => app.call("POST", "/dashboard/session", { key: null, body, headers });
  const browser = async (email: string, mode?: "test" | "live"): Promise<Browser> => {
    const res = await signIn({ email, password: PASSWORD, ...(mode && { mode }) });
    expect(res.status, res.text).toBe(201);
    return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: res.body.csrfToken, sessionId: res.body.id };
  };
  /** A GraphQL call with the browser's cookie (and its CSRF token unless `csrf` is false). */
  const gql = async (b: Browser, query: string, variables?: Record<string, unknown>, opts: { csrf?: boolean; headers?: Record<string, string> } = {}) => {
    const headers = { cookie: b.cookie, ...(opts.csrf !== false && { "x-csrf-token": b.csrf }), ...opts.headers };
    return (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers })).body;
  };

  it("stores users with scrypt hashes, lowercased emails, and refuses weak passwords or taken emails naming the field", async () => {
    const user = await newUser();
    expect(user.email).toBe(`user${n}-${run}@example.com`);
    const row = await app.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(row.passwordHash).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, row.passwordHash)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, row.passwordHash)).toBe(false);
    const merchantId = app.merchant.merchant.id;
    await expect(createUser(app.db.prisma, merchantId, { email: "x@example.com", password: "short" }, OPERATOR)).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "password",
    });
    await expect(createUser(app.db.prisma, merchantId, { email: "not-an-email", password: PASSWORD }, OPERATOR)).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "email",
    });
    await expect(createUser(app.db.prisma, merchantId, { email: user.email.toUpperCase(), password: PASSWORD }, OPERATOR)).rejects.toMatchObject({
      code: "parameter_invalid",
      param: "email",
    });
  });

  it("signs in with an HttpOnly SameSite=Strict cookie; a wrong password or unknown email gets the same 401", async () => {
    const user = await newUser();
    expectError(await signIn({ email: user.email, password: "wrong password" }), 401, "sign_in_failed", "password");
    expectError(await signIn({ email: `nobody-${run}@example.com`, password: PASSWORD }), 401, "sign_in_failed", "password");
    expectError(await signIn({ email: user.email }), 400, "parameter_missing", "password");
    const ok = await signIn({ email: user.email.toUpperCase(), password: PASSWORD });
    expect(ok.status).toBe(201);
    const [cookie = "", device] = ok.headers.getSetCookie();
    expect(cookie).toMatch(/^sg_session=sgs_[0-9A-Za-z]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(device).toMatch(/^sg_device=sgd_[0-9A-Za-z]{43}; Path=\/dashboard; Max-Age=63072000; HttpOnly; SameSite=Strict$/);
    expect(ok.body).toMatchObject({ mode: "test", user: { id: user.id, email: user.email, totpEnabled: false } });
    expect(ok.body.csrfToken).toMatch(/^[0-9A-Za-z]{32}$/);
    // Only the token's hash is stored.
    const token = cookie.split(";")[0]!.split("=")[1]!;
    expect(JSON.stringify(await app.db.prisma.dashboardSession.findMany())).not.toContain(token);
    const me = await app.call("GET", "/dashboard/session", { key: null, headers: { cookie: cookie.split(";")[0]! } });
    expect(me.body).toMatchObject({ id: ok.body.id, user: { email: user.email } });
    expect(me.headers.get("cache-control")).toBe("no-store");
  });

  it("locks an email after 5 failed sign-ins in 15 minutes, the right password included, and no other email", async () => {
    const user = await newUser();
    const other = await newUser();
    for (let i = 0; i < 5; i++) expectError(await signIn({ email: user.email, password: `wrong ${i} password` }), 401, "sign_in_failed");
    const locked = await signIn({ email: user.email, password: PASSWORD });
    expectError(locked, 429, "rate_limited");
    expect(locked.body.message).toMatch(/Too many failed sign-ins for this email: the limit is 5 per 15 minutes/);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(800);
    expect((await signIn({ email: other.email, password: PASSWORD })).status).toBe(201);

    // Guesses sent at once get no more than the 5: each takes its attempt before its password is checked.
    const raced = await newUser();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn({ email: raced.email, password: `parallel guess ${i}` })));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(7);
  });

  it("asks for a TOTP code once two-factor sign-in is on, and counts wrong codes as failures", async () => {
    const user = await newUser();
    const b = await browser(user.email);
    const enrolled = await gql(b, "mutation($p: String) { startTotpEnrollment(password: $p) { secret uri } }", { p: PASSWORD });
    const { secret, uri } = enrolled.data.startTotpEnrollment;
    expect(uri).toBe(`otpauth://totp/Stablegate%3A${encodeURIComponent(user.email)}?secret=${secret}&issuer=Stablegate&algorithm=SHA1&digits=6&period=30`);
    const wrong = await gql(b, "mutation($c: String!) { confirmTotp(code: $c) { user { totpEnabled } } }", {
      c: "000000" === totpCode(secret, Date.now()) ? "111111" : "000000",
    });
    expect(wrong.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "code" });
    const confirmed = await gql(b, "mutation($c: String!) { confirmTotp(code: $c) { user { totpEnabled } } }", { c: totpCode(secret, Date.now()) });
    expect(confirmed.data.confirmTotp.user.totpEnabled).toBe(true);
    // A stolen session cannot swap in its own app: replacing it goes through turning it off, with a code.
    const again = await gql(b, "mutation($p: String) { startTotpEnrollment(password: $p) { secret } }", { p: PASSWORD });
    expect(again.errors[0].message).toMatch(/already on: turn it off \(password and a current code\)/);

    expectError(await signIn({ email: user.email, password: PASSWORD }), 401, "totp_required", "totpCode");
    const badCode = totpCode(secret, Date.now() + 10 * 60_000);
    expectError(await signIn({ email: user.email, password: PASSWORD, totpCode: badCode }), 401, "sign_in_failed", "totpCode");
    // The code that confirmed is spent (test/dashboard/two-factor.test.ts): the next step's signs in.
    expect((await signIn({ email: user.email, password: PASSWORD, totpCode: totpCode(secret, Date.now() + 30_000) })).status).toBe(201);
  });

  it("works on /graphql only with the CSRF header and from its own origin", async () => {
    const b = await browser((await newUser()).email);
    const query = "{ viewer { mode user { email } merchant { id name } } customers(first: 1) { totalCount } }";
    const ok = await gql(b, query);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.viewer.merchant.id).toBe(app.merchant.merchant.id);
    const noCsrf = await gql(b, query, undefined, { csrf: false });
    expect(noCsrf.errors[0].extensions.code).toBe("csrf_token_invalid");
    const wrongCsrf = await gql({ ...b, csrf: "x".repeat(32) }, query);
    expect(wrongCsrf.errors[0].extensions.code).toBe("csrf_token_invalid");
    const foreign = await gql(b, query, undefined, { headers: { origin: "https://evil.example" } });
    expect(foreign.errors[0].extensions.code).toBe("csrf_token_invalid");
    const own = await gql(b, query, undefined, { headers: { origin: app.url } });
    expect(own.errors).toBeUndefined();
    // A page that still shows the other mode (switched in another tab) is told to reload, not served.
    const stale = await gql(b, query, undefined, { headers: { "x-dashboard-mode": "live" } });
    expect(stale.errors[0].extensions).toMatchObject({ code: "session_mode_changed", statusCode: 409 });
    expect((await gql(b, query, undefined, { headers: { "x-dashboard-mode": "test" } })).errors).toBeUndefined();
    // The session endpoints refuse other origins too, signing in included.
    expectError(
      await app.call("GET", "/dashboard/session", { key: null, headers: { cookie: b.cookie, origin: "https://evil.example" } }),
      403,
      "csrf_token_invalid",
    );
    expectError(await signIn({ email: "a@example.com", password: PASSWORD }, { origin: "https://evil.example" }), 403, "csrf_token_invalid");
    expectError(await app.call("DELETE", "/dashboard/session", { key: null, headers: { cookie: b.cookie } }), 403, "csrf_token_invalid", "X-CSRF-Token");
  });

  it("may change keys, settings and users; an API key may not (403 session_required)", async () => {
    const b = await browser((await newUser()).email);
    // Keys, wallets and users need the password again (test/graphql/reauthentication.test.ts).
    const reauthenticated = await app.call("POST", "/dashboard/session/reauthenticate", {
      key: null,
      body: { password: PASSWORD },
      headers: { cookie: b.cookie, "x-csrf-token": b.csrf },
    });
    expect(reauthenticated.status, reauthenticated.text).toBe(200);
    const create = "mutation($ips: [String!]) { createApiKey(mode: TEST, ipAllowlist: $ips) { secret apiKey { id livemode last4 ipAllowlist active } } }";
    const byKey = await app.gql(create, {});
    expect(byKey.errors?.[0].extensions).toMatchObject({ code: "session_required", statusCode: 403 });
    for (const q of [
      "{ apiKeys { id } }",
      "{ users { id } }",
      "{ jwtSecrets { id } }",
      "{ viewer { mode } }",
      'mutation { updateMerchantSettings(input: { name: "x" }) { name } }',
    ]) {
      expect((await app.gql(q)).errors?.[0].extensions.code, q).toBe("session_required");
    }

    const made = (await gql(b, create, { ips: ["127.0.0.1", "::1"] })).data.createApiKey;
    expect(made.apiKey).toMatchObject({ livemode: false, ipAllowlist: ["127.0.0.1", "::1"], active: true, last4: made.secret.slice(-4) });
    expect((await app.call("GET", "/v1/customers", { key: made.secret })).status).toBe(200);
    const badList = await gql(b, create, { ips: ["example.com"] });
    expect(badList.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "ipAllowlist" });

    const rolled = (await gql(b, "mutation($id: ID!) { rollApiKey(id: $id, overlapHours: 0) { secret apiKey { id } } }", { id: made.apiKey.id })).data
      .rollApiKey;
    expect((await app.call("GET", "/v1/customers", { key: made.secret })).status).toBe(401);
    expect((await app.call("GET", "/v1/customers", { key: rolled.secret })).status).toBe(200);
    const revoked = (await gql(b, "mutation($id: ID!) { revokeApiKey(id: $id) { active revokedAt } }", { id: rolled.apiKey.id })).data.revokeApiKey;
    expect(revoked.active).toBe(false);
    const keys = (await gql(b, "{ apiKeys { id livemode active } }")).data.apiKeys;
    expect(keys.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining([made.apiKey.id, rolled.apiKey.id, app.merchant.apiKeys.live.id]));

    const settings = await gql(
      b,
      'mutation($w: String) { updateMerchantSettings(input: { name: "Renamed", liveWallet: $w, paymentWindowMinutes: 30 }) { name liveWallet paymentWindowMinutes feeBps } }',
      {
        w: WALLET.toLowerCase(),
      },
    );
    expect(settings.data.updateMerchantSettings).toEqual({ name: "Renamed", liveWallet: WALLET, paymentWindowMinutes: 30, feeBps: 100 });
    const badWallet = await gql(b, 'mutation { updateMerchantSettings(input: { testWallet: "0x123" }) { name } }');
    expect(badWallet.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "testWallet" });
    const tolerance = await gql(b, "mutation { updateMerchantSettings(input: { underpaymentToleranceBps: 50 }) { underpaymentToleranceBps } }");
    expect(tolerance.data.updateMerchantSettings.underpaymentToleranceBps).toBe(50);
    const badTolerance = await gql(b, "mutation { updateMerchantSettings(input: { underpaymentToleranceBps: 1001 }) { name } }");
    expect(badTolerance.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "underpaymentToleranceBps" });
    const badWindow = await gql(b, "mutation { updateMerchantSettings(input: { paymentWindowMinutes: 2 }) { name } }");
    expect(badWindow.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "paymentWindowMinutes" });

    const jwt = (await gql(b, "mutation { createJwtSecret { id livemode secret } }")).data.createJwtSecret;
    expect(jwt).toMatchObject({ livemode: false, secret: expect.stringMatching(/^jws_test_/) });
    expect((await gql(b, "mutation($id: ID!) { revokeJwtSecret(id: $id) }", { id: jwt.id })).data.revokeJwtSecret).toBe(true);

    // Users join by invitation now: no session may type another person's password.
    const typed = await gql(b, 'mutation { createUser(email: "colleague@example.com", password: "another long password") { id } }');
    expect(typed.errors[0].message).toMatch(/createUser/);
    const added = await createUser(app.db.prisma, app.merchant.merchant.id, { email: `colleague-${run}@example.com`, password: PASSWORD }, OPERATOR);
    expect((await gql(b, 'mutation($id: ID!) { deleteUser(id: $id, password: "correct horse battery") }', { id: added.id })).data.deleteUser).toBe(added.id);
  });

  it("keeps one merchant's session away from another merchant's records and keys", async () => {
    const other = await app.newMerchant();
    const b = await browser((await newUser(other.merchant.id)).email);
    const charge = await app.call("POST", "/v1/charges", { body: { orderId: "isolation-1", amount: "5" } });
    expect(charge.status).toBe(201);
    const read = await gql(b, "query($id: ID!) { node(id: $id) { id } charges(first: 10) { totalCount } }", { id: charge.body.id });
    expect(read.data.node).toBeNull();
    expect(read.data.charges.totalCount).toBe(0);
    const foreignKey = await gql(b, "mutation($id: ID!) { revokeApiKey(id: $id) { id } }", { id: app.merchant.apiKeys.test.id });
    expect(foreignKey.errors[0].extensions.code).toBe("resource_missing");
    const roll = await gql(b, "mutation($id: ID!, $p: String) { rollApiKey(id: $id, password: $p) { secret } }", {
      id: app.merchant.apiKeys.test.id,
      p: PASSWORD,
    });
    expect(roll.errors[0].extensions.code).toBe("parameter_invalid");
    const someone = await newUser();
    const foreignUser = await gql(b, 'mutation($id: ID!) { deleteUser(id: $id, password: "correct horse battery") }', { id: someone.id });
    expect(foreignUser.errors[0].extensions.code).toBe("resource_missing");
    const lastUser = await gql(b, "{ viewer { user { id } } }");
    const alone = await gql(b, 'mutation($id: ID!) { deleteUser(id: $id, password: "correct horse battery") }', { id: lastUser.data.viewer.user.id });
    expect(alone.errors[0].extensions.message ?? alone.errors[0].message).toMatch(/only owner/);
    expect((await app.call("GET", "/v1/customers", { key: app.merchant.apiKeys.test.secret })).status).toBe(200);
  });

  it("sees the mode it chose: switching to live shows live records only", async () => {
    const b = await browser((await newUser()).email);
    await app.call("POST", "/v1/customers", { key: app.liveKey, body: { email: `live${n}@example.com`, name: "Live" } });
    const count = async () => (await gql(b, `{ customers(email: "live${n}@example.com") { totalCount } viewer { mode } }`)).data;
    expect(await count()).toEqual({ customers: { totalCount: 0 }, viewer: { mode: "TEST" } });
    const switched = await app.call("PATCH", "/dashboard/session", {
      key: null,
      body: { mode: "live" },
      headers: { cookie: b.cookie, "x-csrf-token": b.csrf },
    });
    expect(switched.body.mode).toBe("live");
    expect(await count()).toEqual({ customers: { totalCount: 1 }, viewer: { mode: "LIVE" } });
    expectError(
      await app.call("PATCH", "/dashboard/session", { key: null, body: { mode: "prod" }, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } }),
      400,
      "parameter_invalid",
      "mode",
    );
  });

  it("follows charges live over WebSocket with the cookie and the CSRF token as connectionParams", async () => {
    const b = await browser((await newUser()).email);
    const refused = wsClient(app.url, undefined, { cookie: b.cookie });
    const s0 = subscribe(refused, "subscription { chargeEvents { type } }");
    await s0.ended(5_000).catch(() => {});
    expect(refused.closes[0]?.reason).toMatch(/csrf_token_invalid/);
    await refused.dispose();

    await subscribed(app.pubsub, 0);
    const client = wsClient(app.url, undefined, { cookie: b.cookie }, { "X-CSRF-Token": b.csrf });
    const events = subscribe(client, "subscription { chargeEvents { type data } }");
    await subscribed(app.pubsub, 1);
    await app.call("POST", "/v1/charges", { body: { orderId: `live-ws-${n}`, amount: "5" } });
    const [first] = await events.waitFor(1);
    expect(first.chargeEvents).toMatchObject({ type: "charge.pending", data: { orderId: `live-ws-${n}` } });
    // Signing out closes the session's live connections too (checked as often as revoked keys are).
    await app.call("DELETE", "/dashboard/session", { key: null, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } });
    await events.ended(10_000).catch(() => {});
    await expect.poll(() => client.closes[0]?.reason, { timeout: 10_000 }).toBe("signed out");
    await client.dispose();
  });

  it("ends on sign-out, everywhere at once, after a password reset, and after 12 idle hours", async () => {
    const user = await newUser();
    const a = await browser(user.email);
    const b = await browser(user.email);
    const gone = async (x: Browser) =>
      expectError(await app.call("GET", "/dashboard/session", { key: null, headers: { cookie: x.cookie } }), 401, "session_invalid");
    const out = await app.call("DELETE", "/dashboard/session", { key: null, headers: { cookie: a.cookie, "x-csrf-token": a.csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^sg_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
    await gone(a);
    expect((await gql(a, "{ viewer { mode } }")).errors[0].extensions.code).toBe("session_invalid");

    const c = await browser(user.email);
    expect((await gql(b, "mutation { signOutEverywhere }")).data.signOutEverywhere).toBe(2);
    await gone(b);
    await gone(c);

    const d = await browser(user.email);
    await app.db.prisma.dashboardSession.update({ where: { id: d.sessionId }, data: { lastSeenAt: new Date(Date.now() - 12 * 3_600_000 - 1000) } });
    await gone(d);
    expect(await app.db.prisma.dashboardSession.count({ where: { id: d.sessionId } })).toBe(0);

    const e = await browser(user.email);
    const { resetPassword } = await import("../../src/domain/users.js");
    await resetPassword(app.db.prisma, user.id, "a brand new password");
    await gone(e);
  });

  it("marks the cookie Secure when the service is served over https", () => {
    expect(sessionCookie("sgs_x", true)).toBe("sg_session=sgs_x; Path=/; HttpOnly; SameSite=Strict; Secure");
    expect(clearedSessionCookie(true)).toBe("sg_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure");
  });

  it("refuses a forged or missing cookie on the session endpoints with 401 session_invalid", async () => {
    expectError(await app.call("GET", "/dashboard/session", { key: null }), 401, "session_invalid");
    expectError(await app.call("GET", "/dashboard/session", { key: null, headers: { cookie: `sg_session=sgs_${"a".repeat(43)}` } }), 401, "session_invalid");
    // A key still works next to a stale cookie: the key wins.
    const key = (await createApiKey(app.db.prisma, app.merchant.merchant.id, false, [], OPERATOR, OPERATOR_ACTOR)).secret;
    const both = await app.call("POST", "/graphql", { key, body: { query: "{ customers(first: 1) { totalCount } }" }, headers: { cookie: "sg_session=junk" } });
    expect(both.body.errors).toBeUndefined();
  });
});
