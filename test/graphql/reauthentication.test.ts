// Re-authentication over GraphQL (.docs/dashboard.md "Safety rails"): changing a settlement wallet, creating or
// rolling API keys, creating users and turning two-factor on or off answer 403 `reauthentication_required`
// without the password; they pass with the password given with the mutation, or after POST
// /dashboard/session/reauthenticate for 5 minutes (signing in does not count); wrong passwords and
// codes spend the email's sign-in budget; a rolled key can be revoked at once. The rule is the domain's own:
// each guarded function awaits its confirmation before it writes.
import { randomBytes } from "node:crypto";
import { getAddress, hexlify } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";
import { createApiKey, rollApiKey } from "../../src/domain/api-keys.js";
import { REAUTHENTICATION_MS, requireRecentAuthentication } from "../../src/domain/reauthentication.js";
import { totpCode } from "../../src/domain/totp.js";
import { regenerateRecoveryCodes } from "../../src/domain/two-factor.js";
import { createUser, disableTotp, startTotpEnrollment } from "../../src/domain/users.js";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const PASSWORD = "correct horse battery";
// Emails of this run only: on Redis the sign-in counters outlive a run.
const RUN = randomBytes(4).toString("hex");

/** A signed-in browser: its cookie, CSRF token and session id. */
interface Browser {
  cookie: string;
  csrf: string;
  sessionId: string;
  userId: string;
  email: string;
}

/** One guarded mutation: its text (proof as $p and $c), fresh variables, and the name of its password argument. */
interface Guarded {
  name: string;
  query: string;
  variables: () => Promise<Record<string, unknown>>;
  param: string;
}

describe("re-authentication for the dashboard's riskiest mutations", () => {
  let app: TestApp;
  let n = 0;
  beforeAll(async () => {
    app = await startApp(POLLING);
  }, 60_000);
  afterAll(() => app?.stop());

  const merchantId = () => app.merchant.merchant.id;
  const newUser = () => createUser(app.db.prisma, merchantId(), { email: `reauth${++n}-${RUN}@example.com`, password: PASSWORD }, OPERATOR);
  const signIn = (body: Record<string, unknown>) => app.call("POST", "/dashboard/session", { key: null, body });
  const browser = async (): Promise<Browser> => {
    const user = await newUser();
    const res = await signIn({ email: user.email, password: PASSWORD });
    expect(res.status, res.text).toBe(201);
    return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: res.body.csrfToken, sessionId: res.body.id, userId: user.id, email: user.email };
  };
  const gql = async (b: Browser, query: string, variables?: Record<string, unknown>) =>
    (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } })).body;
  const reauthenticate = (b: Browser, body: Record<string, unknown>) =>
    app.call("POST", "/dashboard/session/reauthenticate", { key: null, body, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } });
  /** Turns two-factor sign-in on for the browser's user; returns its secret. */
  const withTotp = async (b: Browser) => {
    const user = await app.db.prisma.user.findUniqueOrThrow({ where: { id: b.userId } });
    const { secret } = await startTotpEnrollment(app.db.prisma, user, OPERATOR);
    await app.db.prisma.user.update({ where: { id: b.userId }, data: { totpSecret: secret, totpPending: null } });
    return secret;
  };
  const wallet = () => getAddress(hexlify(randomBytes(20)));

  const GUARDED: Guarded[] = [
    {
      name: "updateMerchantSettings changing a wallet",
      query: "mutation($w: String, $p: String, $c: String) { updateMerchantSettings(input: { testWallet: $w, password: $p, totpCode: $c }) { testWallet } }",
      variables: async () => ({ w: wallet() }),
      param: "password",
    },
    {
      name: "createApiKey",
      query: "mutation($p: String, $c: String) { createApiKey(mode: TEST, password: $p, totpCode: $c) { secret } }",
      variables: async () => ({}),
      param: "password",
    },
    {
      name: "rollApiKey",
      query: "mutation($id: ID!, $p: String, $c: String) { rollApiKey(id: $id, overlapHours: 1, password: $p, totpCode: $c) { secret } }",
      variables: async () => ({ id: (await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR)).id }),
      param: "password",
    },
    {
      name: "inviteUser",
      query: "mutation($e: String!, $p: String, $c: String) { inviteUser(email: $e, password: $p, totpCode: $c) { id } }",
      variables: async () => ({ e: `added${++n}-${RUN}@example.com` }),
      param: "password",
    },
    {
      name: "startTotpEnrollment (turning two-factor on)",
      query: "mutation($p: String) { startTotpEnrollment(password: $p) { uri } }",
      variables: async () => ({}),
      param: "password",
    },
    {
      name: "disableTotp",
      query: "mutation($p: String, $c: String) { disableTotp(password: $p, code: $c) { totpEnabled } }",
      variables: async () => ({}),
      param: "password",
    },
  ];

  it.each(GUARDED.map((g) => [g.name, g] as const))("%s: 403 reauthentication_required without proof, right after signing in", async (_name, g) => {
    const b = await browser();
    const before = {
      wallet: (await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: merchantId() } })).testWallet,
      keys: await app.db.prisma.apiKey.count(),
    };
    const users = await app.db.prisma.user.count();
    const invitations = await app.db.prisma.invitation.count({ where: { merchantId: merchantId() } });
    const res = await gql(b, g.query, await g.variables());
    expect(res.errors?.[0].extensions, JSON.stringify(res)).toMatchObject({ code: "reauthentication_required", statusCode: 403, param: g.param });
    expect(res.errors[0].message).toMatch(new RegExp(`give it as ${g.param}.*POST /dashboard/session/reauthenticate`));
    // Signing in set nothing, and the refusal changed nothing.
    expect((await app.db.prisma.dashboardSession.findUniqueOrThrow({ where: { id: b.sessionId } })).reauthenticatedAt).toBeNull();
    expect((await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: merchantId() } })).testWallet).toBe(before.wallet);
    // rollApiKey's variables made a key of their own.
    expect(await app.db.prisma.apiKey.count()).toBe(before.keys + (g.name === "rollApiKey" ? 1 : 0));
    expect(await app.db.prisma.user.count()).toBe(users);
    expect(await app.db.prisma.invitation.count({ where: { merchantId: merchantId() } })).toBe(invitations);
  });

  it.each(GUARDED.map((g) => [g.name, g] as const))("%s: passes with the password given with it, refuses a wrong one", async (_name, g) => {
    const b = await browser();
    const wrong = await gql(b, g.query, { ...(await g.variables()), p: "not my password" });
    expect(wrong.errors?.[0].extensions).toMatchObject({ code: "reauthentication_required", param: g.param });
    expect(wrong.errors[0].message).toMatch(/not your password/);
    const ok = await gql(b, g.query, { ...(await g.variables()), p: PASSWORD });
    expect(ok.errors, JSON.stringify(ok.errors)).toBeUndefined();
    // The password was for that mutation only: the next one needs it again.
    const next = await gql(b, g.query, await g.variables());
    expect(next.errors?.[0].extensions.code).toBe("reauthentication_required");
  });

  it("passes every guarded mutation for 5 minutes after POST /dashboard/session/reauthenticate, then refuses again", async () => {
    const b = await browser();
    const started = Date.now();
    const res = await reauthenticate(b, { password: PASSWORD });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const until = Date.parse(res.body.reauthenticatedUntil);
    expect(until - started).toBeGreaterThanOrEqual(REAUTHENTICATION_MS - 1000);
    expect(until - Date.now()).toBeLessThanOrEqual(REAUTHENTICATION_MS);
    for (const g of GUARDED) {
      const ok = await gql(b, g.query, await g.variables());
      expect(ok.errors, `${g.name}: ${JSON.stringify(ok.errors)}`).toBeUndefined();
    }
    // Five minutes later (the session row as it would be then) it no longer counts.
    await app.db.prisma.dashboardSession.update({ where: { id: b.sessionId }, data: { reauthenticatedAt: new Date(Date.now() - REAUTHENTICATION_MS - 1000) } });
    for (const g of GUARDED) expect((await gql(b, g.query, await g.variables())).errors?.[0].extensions.code, g.name).toBe("reauthentication_required");
  });

  it("counts a re-authentication for exactly 5 minutes from when it was made (the clock injected)", async () => {
    const b = await browser();
    const limiter = new RateLimiter({ create: 100, read: 100, list: 100, public: 100, authFailures: 100, gasless: 100, x402: 100 });
    const session = { sessionId: b.sessionId, userId: b.userId };
    const at = new Date("2030-01-01T12:00:00Z");
    await expect(requireRecentAuthentication(app.db.prisma, limiter, session, {}, at)).rejects.toMatchObject({ code: "reauthentication_required" });
    await app.db.prisma.dashboardSession.update({ where: { id: b.sessionId }, data: { reauthenticatedAt: at } });
    await expect(requireRecentAuthentication(app.db.prisma, limiter, session, {}, new Date(at.getTime() + REAUTHENTICATION_MS))).resolves.toBeUndefined();
    await expect(requireRecentAuthentication(app.db.prisma, limiter, session, {}, new Date(at.getTime() + REAUTHENTICATION_MS + 1))).rejects.toMatchObject({
      code: "reauthentication_required",
      param: "password",
    });
    // Another session of the same user is not re-authenticated by this one.
    const other = await signIn({ email: b.email, password: PASSWORD });
    await expect(requireRecentAuthentication(app.db.prisma, limiter, { sessionId: other.body.id, userId: b.userId }, {}, at)).rejects.toMatchObject({
      code: "reauthentication_required",
    });
  });

  it("is the domain's own rule: each guarded function awaits its confirmation before it writes anything", async () => {
    const refused = new Error("not confirmed");
    const refuse = () => Promise.reject(refused);
    const b = await browser();
    await withTotp(b);
    const key = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR);
    const state = async () => ({
      keys: await app.db.prisma.apiKey.count({ where: { merchantId: merchantId() } }),
      users: await app.db.prisma.user.count({ where: { merchantId: merchantId() } }),
      user: await app.db.prisma.user.findUniqueOrThrow({ where: { id: b.userId }, select: { totpSecret: true } }),
      codes: await app.db.prisma.recoveryCode.findMany({ where: { userId: b.userId }, select: { codeHash: true } }),
    });
    const before = await state();
    await expect(createApiKey(app.db.prisma, merchantId(), false, [], refuse, OPERATOR_ACTOR)).rejects.toBe(refused);
    await expect(rollApiKey(app.db.prisma, key.id, { overlapHours: 24 }, refuse, { actor: OPERATOR_ACTOR })).rejects.toBe(refused);
    await expect(createUser(app.db.prisma, merchantId(), { email: `refused-${RUN}@example.com`, password: PASSWORD }, refuse)).rejects.toBe(refused);
    await expect(disableTotp(app.db.prisma, b.userId, refuse, OPERATOR_ACTOR)).rejects.toBe(refused);
    await expect(startTotpEnrollment(app.db.prisma, { id: b.userId, email: b.email, totpSecret: null }, refuse)).rejects.toBe(refused);
    await expect(regenerateRecoveryCodes(app.db.prisma, b.userId, refuse)).rejects.toBe(refused);
    expect(await state()).toEqual(before);
  });

  it("lets settings that move no money change without a password: the name, or a wallet sent as it is", async () => {
    const b = await browser();
    const current = (await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: merchantId() } })).testWallet;
    const res = await gql(b, 'mutation($w: String) { updateMerchantSettings(input: { name: "Renamed shop", testWallet: $w }) { name testWallet } }', {
      w: current,
    });
    expect(res.errors).toBeUndefined();
    expect(res.data.updateMerchantSettings).toEqual({ name: "Renamed shop", testWallet: current });
  });

  it("counts wrong passwords on re-authentication toward the email's sign-in lock-out", async () => {
    const b = await browser();
    expectError(await reauthenticate(b, { password: "wrong password 1" }), 403, "reauthentication_required", "password");
    expectError(await reauthenticate(b, { password: "wrong password 2" }), 403, "reauthentication_required", "password");
    expect((await gql(b, GUARDED[1]!.query, { p: "wrong password 3" })).errors[0].extensions.code).toBe("reauthentication_required");
    expect((await gql(b, GUARDED[1]!.query, { p: "wrong password 4" })).errors[0].extensions.code).toBe("reauthentication_required");
    expectError(await reauthenticate(b, { password: "wrong password 5" }), 403, "reauthentication_required", "password");
    // Five failures: the email is locked, for signing in and for re-authenticating, the right password included.
    expectError(await reauthenticate(b, { password: PASSWORD }), 429, "rate_limited");
    const locked = await signIn({ email: b.email, password: PASSWORD });
    expectError(locked, 429, "rate_limited");
    expect(locked.body.message).toMatch(/Too many failed sign-ins for this email/);
    // A right password gives its attempt back: it does not use up the budget.
    const c = await browser();
    for (let i = 0; i < 6; i++) expect((await reauthenticate(c, { password: PASSWORD })).status).toBe(200);
  });

  it("with two-factor on asks for a code too; a replayed code or a wrong one is refused and counted", async () => {
    const b = await browser();
    const secret = await withTotp(b);
    expectError(await reauthenticate(b, { password: PASSWORD }), 403, "reauthentication_required", "totpCode");
    const now = totpCode(secret, Date.now());
    expect((await reauthenticate(b, { password: PASSWORD, totpCode: now })).status).toBe(200);
    // The same code again, as someone who saw it would send it.
    const replay = await reauthenticate(b, { password: PASSWORD, totpCode: now });
    expectError(replay, 403, "reauthentication_required", "totpCode");
    expect(replay.body.message).toMatch(/already used/);
    const withCode = await gql(b, GUARDED[1]!.query, { p: PASSWORD, c: now });
    expect(withCode.errors[0].extensions).toMatchObject({ code: "reauthentication_required", param: "totpCode" });
    // The next step's code is still good once.
    expect((await gql(b, GUARDED[1]!.query, { p: PASSWORD, c: totpCode(secret, Date.now() + 30_000) })).errors).toBeUndefined();
    // Two refusals so far, three more lock the email.
    for (let i = 0; i < 3; i++) expectError(await reauthenticate(b, { password: PASSWORD, totpCode: "000000" }), 403, "reauthentication_required");
    expectError(await signIn({ email: b.email, password: PASSWORD, totpCode: totpCode(secret, Date.now()) }), 429, "rate_limited");
  });

  it("turns two-factor off with the password and a current code, naming `code` when it is wrong", async () => {
    const b = await browser();
    const secret = await withTotp(b);
    const disable = "mutation($p: String, $c: String) { disableTotp(password: $p, code: $c) { totpEnabled } }";
    expect((await gql(b, disable, { c: totpCode(secret, Date.now()) })).errors[0].extensions).toMatchObject({
      code: "reauthentication_required",
      param: "password",
    });
    expect((await gql(b, disable, { p: PASSWORD })).errors[0].extensions).toMatchObject({ code: "reauthentication_required", param: "code" });
    expect((await gql(b, disable, { p: PASSWORD, c: totpCode(secret, Date.now() + 600_000) })).errors[0].extensions).toMatchObject({
      code: "reauthentication_required",
      param: "code",
    });
    const off = await gql(b, disable, { p: PASSWORD, c: totpCode(secret, Date.now()) });
    expect(off.errors).toBeUndefined();
    expect(off.data.disableTotp.totpEnabled).toBe(false);
    expect(await app.db.prisma.user.findUniqueOrThrow({ where: { id: b.userId } })).toMatchObject({ totpSecret: null, totpLastStep: null });
  });

  it("leaves API keys as they were: these mutations are a session's only", async () => {
    const res = await app.gql('mutation { createApiKey(mode: TEST, password: "correct horse battery") { secret } }');
    expect(res.errors?.[0].extensions.code).toBe("session_required");
  });

  it("revokes a rolled key at once, during its overlap", async () => {
    const b = await browser();
    const old = await createApiKey(app.db.prisma, merchantId(), false, [], OPERATOR, OPERATOR_ACTOR);
    const rolled = await gql(b, "mutation($id: ID!, $p: String) { rollApiKey(id: $id, password: $p) { secret } }", { id: old.id, p: PASSWORD });
    expect(rolled.errors).toBeUndefined();
    expect((await app.call("GET", "/v1/customers", { key: old.secret })).status).toBe(200);
    // Revoking needs no password: it takes access away, never gives it.
    const revoked = await gql(b, "mutation($id: ID!) { revokeApiKey(id: $id) { active revokedAt expiresAt } }", { id: old.id });
    expect(revoked.errors).toBeUndefined();
    expect(revoked.data.revokeApiKey).toMatchObject({ active: false, revokedAt: expect.any(String), expiresAt: expect.any(String) });
    expect((await app.call("GET", "/v1/customers", { key: old.secret })).status).toBe(401);
    expect((await app.call("GET", "/v1/customers", { key: rolled.data.rollApiKey.secret })).status).toBe(200);
  });
});
