// Team roles over GraphQL with real dashboard sessions (.docs/dashboard.md "Roles"): each role tries a
// mutation of every capability; those outside its role are 403 `permission_denied` naming the roles
// that may and change nothing, the others pass the role check. The team's rules (one's own role,
// owners only by owners, always an owner), invitations with a role, the session's view of the role,
// changing one's password, and the security history of each change.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { can, type Capability, type Role } from "../../src/domain/permissions.js";
import { OPERATOR_ACTOR } from "../../src/domain/security-events.js";
import { removeUser, setUserRole } from "../../src/domain/team.js";
import { totpCode } from "../../src/domain/totp.js";
import { createUser } from "../../src/domain/users.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a brand new long password";
// Emails of this run only: on Redis the sign-in counters outlive a run.
const RUN = randomBytes(4).toString("hex");

interface Browser {
  cookie: string;
  csrf: string;
  sessionId: string;
  userId: string;
  email: string;
}

/** One mutation standing for a capability: its text and fresh variables. */
interface Probe {
  capability: Capability;
  query: string;
  variables: () => Record<string, unknown>;
}

describe("team roles", () => {
  let app: TestApp;
  let n = 0;
  beforeAll(async () => {
    app = await startApp(POLLING);
  }, 60_000);
  afterAll(() => app?.stop());

  const prisma = () => app.db.prisma;
  const merchantId = () => app.merchant.merchant.id;
  const newUser = (role: Role, merchant = merchantId()) =>
    createUser(prisma(), merchant, { email: `${role}${++n}-${RUN}@example.com`, password: PASSWORD, role }, OPERATOR);
  const signIn = async (email: string, password = PASSWORD): Promise<Omit<Browser, "userId" | "email">> => {
    const res = await app.call("POST", "/dashboard/session", { key: null, body: { email, password } });
    expect(res.status, res.text).toBe(201);
    return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: res.body.csrfToken, sessionId: res.body.id };
  };
  const browser = async (role: Role, merchant?: string): Promise<Browser> => {
    const user = await newUser(role, merchant);
    return { ...(await signIn(user.email)), userId: user.id, email: user.email };
  };
  const gql = async (b: Pick<Browser, "cookie" | "csrf">, query: string, variables?: Record<string, unknown>) =>
    (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } })).body;

  /** What the probes could change, to show a refusal changed nothing. */
  const state = async () => ({
    customers: await prisma().customer.count({ where: { merchantId: merchantId() } }),
    keys: await prisma().apiKey.count({ where: { merchantId: merchantId() } }),
    endpoints: await prisma().webhookEndpoint.count({ where: { merchantId: merchantId() } }),
    invitations: await prisma().invitation.count({ where: { merchantId: merchantId() } }),
    users: await prisma().user.findMany({ where: { merchantId: merchantId() }, select: { id: true, role: true }, orderBy: { id: "asc" } }),
    name: (await prisma().merchant.findUniqueOrThrow({ where: { id: merchantId() } })).name,
    events: await prisma().securityEvent.count({ where: { merchantId: merchantId() } }),
  });

  let target = "";
  const PROBES: Probe[] = [
    {
      capability: "team",
      query: 'mutation($id: ID!) { setUserRole(id: $id, role: SUPPORT, password: "correct horse battery") { role } }',
      variables: () => ({ id: target }),
    },
    { capability: "team", query: 'mutation($id: ID!) { deleteUser(id: $id, password: "correct horse battery") }', variables: () => ({ id: target }) },
    {
      capability: "team",
      query: "mutation($e: String!, $p: String) { inviteUser(email: $e, role: VIEWER, password: $p) { id } }",
      variables: () => ({ e: `invited${++n}-${RUN}@example.com`, p: PASSWORD }),
    },
    { capability: "settings", query: 'mutation { updateMerchantSettings(input: { name: "Renamed" }) { name } }', variables: () => ({}) },
    { capability: "developers", query: "mutation($p: String) { createApiKey(mode: TEST, password: $p) { secret } }", variables: () => ({ p: PASSWORD }) },
    {
      capability: "developers",
      query: 'mutation { createWebhookEndpoint(input: { url: "https://hooks.example.com/x" }) { secret } }',
      variables: () => ({}),
    },
    { capability: "money", query: 'mutation { markChargeReviewed(id: "chrg_000000000000000000000000") { id } }', variables: () => ({}) },
    {
      capability: "billing",
      query: 'mutation($e: String!) { createCustomer(input: { name: "Buyer", email: $e }) { id } }',
      variables: () => ({ e: `buyer${++n}-${RUN}@example.com` }),
    },
  ];

  it.each(["admin", "developer", "support", "viewer"] as const)("%s: refused outside its role, changing nothing; let through within it", async (role) => {
    const b = await browser(role);
    for (const probe of PROBES) {
      // A fresh teammate (not an owner) to act on each time.
      target = (await newUser("viewer")).id;
      const before = await state();
      const res = await gql(b, probe.query, probe.variables());
      if (can(role, probe.capability)) {
        expect(res.errors?.[0]?.extensions?.code, `${role} ${probe.query}: ${JSON.stringify(res.errors)}`).not.toBe("permission_denied");
        continue;
      }
      expect(res.errors?.[0]?.extensions, `${role} ${probe.query}`).toMatchObject({ code: "permission_denied", statusCode: 403 });
      expect(res.errors[0].message).toMatch(new RegExp(`^Your role \\(${role}\\) may not do this: only owners`));
      expect(res.data).toBeNull();
      expect(await state(), `${role} ${probe.query}`).toEqual(before);
    }
  });

  it("lets an owner do everything, and an API key is the merchant's own: no role", async () => {
    const owner = await browser("owner");
    for (const probe of PROBES) {
      target = (await newUser("viewer")).id;
      const res = await gql(owner, probe.query, probe.variables());
      expect(res.errors?.[0]?.extensions?.code, probe.query).not.toBe("permission_denied");
    }
    const key = await app.gql(`mutation { createCustomer(input: { name: "Key", email: "key-${RUN}@example.com" }) { id } }`);
    expect(key.errors).toBeUndefined();
  });

  it("shows the signed-in user's role in the session and in GraphQL", async () => {
    const b = await browser("support");
    const session = await app.call("GET", "/dashboard/session", { key: null, headers: { cookie: b.cookie } });
    expect(session.body.user).toMatchObject({ id: b.userId, role: "support" });
    const res = await gql(b, "{ viewer { user { role } } users { id role } }");
    expect(res.data.viewer.user.role).toBe("SUPPORT");
    expect(res.data.users.find((u: { id: string }) => u.id === b.userId).role).toBe("SUPPORT");
  });

  describe("the team's rules", () => {
    const setRole = (b: Browser, id: string, role: string) =>
      gql(b, 'mutation($id: ID!, $r: UserRole!) { setUserRole(id: $id, role: $r, password: "correct horse battery") { id role } }', { id, r: role });

    it("changes a role and records it; nobody changes their own", async () => {
      const admin = await browser("admin");
      const dev = await newUser("developer");
      const res = await setRole(admin, dev.id, "SUPPORT");
      expect(res.errors).toBeUndefined();
      expect(res.data.setUserRole).toEqual({ id: dev.id, role: "SUPPORT" });
      const event = await prisma().securityEvent.findFirstOrThrow({
        where: { merchantId: merchantId(), type: "role_changed" },
        orderBy: { createdAt: "desc" },
      });
      expect(event).toMatchObject({
        userId: admin.userId,
        email: admin.email,
        ip: expect.any(String),
        detail: { userId: dev.id, from: "developer", to: "support" },
      });

      const own = await setRole(admin, admin.userId, "OWNER");
      expect(own.errors[0].extensions).toMatchObject({ code: "permission_denied" });
      expect(own.errors[0].message).toMatch(/Nobody changes their own role/);
      const owner = await browser("owner");
      expect((await setRole(owner, owner.userId, "ADMIN")).errors[0].extensions.code).toBe("permission_denied");
      expect((await prisma().user.findUniqueOrThrow({ where: { id: owner.userId } })).role).toBe("owner");
    });

    it("lets only owners make an owner, change an owner's role or remove an owner", async () => {
      const admin = await browser("admin");
      const owner = await browser("owner");
      const viewer = await newUser("viewer");
      const made = await setRole(admin, viewer.id, "OWNER");
      expect(made.errors[0].extensions).toMatchObject({ code: "permission_denied", statusCode: 403 });
      expect(made.errors[0].message).toMatch(/Only owners may make an owner/);
      expect((await setRole(admin, owner.userId, "VIEWER")).errors[0].extensions.code).toBe("permission_denied");
      const removed = await gql(admin, 'mutation($id: ID!) { deleteUser(id: $id, password: "correct horse battery") }', { id: owner.userId });
      expect(removed.errors[0].message).toMatch(/Only owners may remove an owner/);
      const invited = await gql(admin, "mutation($e: String!, $p: String) { inviteUser(email: $e, role: OWNER, password: $p) { id } }", {
        e: `boss-${RUN}@example.com`,
        p: PASSWORD,
      });
      expect(invited.errors[0].extensions).toMatchObject({ code: "permission_denied", param: "role" });
      expect(await prisma().user.findUniqueOrThrow({ where: { id: owner.userId } })).toMatchObject({ role: "owner" });
      expect(await prisma().invitation.count({ where: { email: `boss-${RUN}@example.com` } })).toBe(0);

      expect((await setRole(owner, viewer.id, "OWNER")).data.setUserRole.role).toBe("OWNER");
      expect((await setRole(owner, viewer.id, "ADMIN")).data.setUserRole.role).toBe("ADMIN");
    });

    it("always keeps an owner: the last one can neither lose the role nor be removed, not even by the operator", async () => {
      const shop = await app.newMerchant();
      const only = await browser("owner", shop.merchant.id);
      const admin = await newUser("admin", shop.merchant.id);
      const self = await gql(only, 'mutation($id: ID!) { deleteUser(id: $id, password: "correct horse battery") }', { id: only.userId });
      expect(self.errors[0].extensions).toMatchObject({ code: "last_owner", statusCode: 409 });
      const row = await prisma().user.findUniqueOrThrow({ where: { id: only.userId } });
      await expect(setUserRole(prisma(), "operator", row, "admin", OPERATOR, OPERATOR_ACTOR)).rejects.toMatchObject({ code: "last_owner" });
      await expect(removeUser(prisma(), "operator", row, OPERATOR, OPERATOR_ACTOR)).rejects.toMatchObject({ code: "last_owner" });
      // Two owners demoting each other at once: one of them stays an owner.
      await setUserRole(prisma(), "operator", admin, "owner", OPERATOR, OPERATOR_ACTOR);
      const [a, b] = await Promise.allSettled([
        setUserRole(prisma(), "operator", row, "viewer", OPERATOR, OPERATOR_ACTOR),
        setUserRole(prisma(), "operator", admin, "viewer", OPERATOR, OPERATOR_ACTOR),
      ]);
      expect([a.status, b.status].sort()).toEqual(["fulfilled", "rejected"]);
      expect(await prisma().user.count({ where: { merchantId: shop.merchant.id, role: "owner" } })).toBe(1);
      expect(await prisma().user.count({ where: { merchantId: shop.merchant.id } })).toBe(2);
      // Whoever was demoted signs in again under the new role: their sessions ended with the change.
      const demoted = a.status === "fulfilled" ? row.id : admin.id;
      expect(await prisma().dashboardSession.count({ where: { userId: demoted } })).toBe(0);
    });

    it("refuses an unknown role naming the field", async () => {
      const owner = await browser("owner");
      const viewer = await newUser("viewer");
      expect((await setRole(owner, viewer.id, "ROOT")).errors[0].message).toMatch(/"ROOT" does not exist in "UserRole" enum/);
      await expect(setUserRole(prisma(), "operator", viewer as never, "root", OPERATOR, OPERATOR_ACTOR)).rejects.toMatchObject({
        code: "parameter_invalid",
        param: "role",
      });
    });
  });

  it("gives an invitee the invitation's role, recording the invitation and the joining", async () => {
    const owner = await browser("owner");
    const email = `dev-${RUN}@example.com`;
    const invited = await gql(owner, "mutation($e: String!, $p: String) { inviteUser(email: $e, role: DEVELOPER, password: $p) { id role link } }", {
      e: email,
      p: PASSWORD,
    });
    expect(invited.errors).toBeUndefined();
    expect(invited.data.inviteUser.role).toBe("DEVELOPER");
    const mail = await prisma().email.findFirstOrThrow({ where: { to: email, type: "invitation" } });
    const token = /token=(invt_[0-9A-Za-z]+)/.exec(mail.text)![1];
    // No SMTP_URL here: the inviter is given the same link to pass on.
    expect(new URL(invited.data.inviteUser.link).searchParams.get("token")).toBe(token);
    const accepted = await app.call("POST", "/dashboard/invitations/accept", { key: null, body: { token, password: NEW_PASSWORD } });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.user).toMatchObject({ email, role: "developer" });
    const types = (
      await prisma().securityEvent.findMany({ where: { merchantId: merchantId(), OR: [{ email }, { detail: { path: ["email"], equals: email } }] } })
    ).map((e) => [e.type, e.detail]);
    expect(types).toEqual(
      expect.arrayContaining([
        ["user_invited", { email, role: "developer" }],
        ["user_joined", { userId: accepted.body.user.id, email, role: "developer" }],
      ]),
    );
  });

  describe("changing one's password", () => {
    const change = (b: Browser, vars: Record<string, unknown>) =>
      gql(b, "mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) }", vars);

    it("needs the current password, ends the user's other sessions and keeps this one", async () => {
      const b = await browser("viewer");
      const other = await signIn(b.email);
      const wrong = await change(b, { c: "not my password", n: NEW_PASSWORD });
      expect(wrong.errors[0].extensions).toMatchObject({ code: "reauthentication_required", param: "currentPassword" });
      expect(wrong.errors[0].message).toMatch(/not your password/);
      const short = await change(b, { c: PASSWORD, n: "short" });
      expect(short.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "newPassword" });
      const same = await change(b, { c: PASSWORD, n: PASSWORD });
      expect(same.errors[0].extensions).toMatchObject({ code: "parameter_invalid", param: "newPassword" });
      expect(await prisma().dashboardSession.count({ where: { userId: b.userId } })).toBe(2);

      const ok = await change(b, { c: PASSWORD, n: NEW_PASSWORD });
      expect(ok.errors).toBeUndefined();
      expect(ok.data.changePassword).toBe(1);
      expect((await gql(other, "{ viewer { user { id } } }")).errors[0].extensions.code).toBe("session_invalid");
      expect((await gql(b, "{ viewer { user { id } } }")).data.viewer.user.id).toBe(b.userId);
      expectError(await app.call("POST", "/dashboard/session", { key: null, body: { email: b.email, password: PASSWORD } }), 401, "sign_in_failed");
      await signIn(b.email, NEW_PASSWORD);
      const event = await prisma().securityEvent.findFirstOrThrow({ where: { userId: b.userId, type: "password_changed" } });
      expect(event.detail).toEqual({ userId: b.userId, sessionsEnded: 1 });
      expect(await prisma().email.count({ where: { to: b.email, subject: { startsWith: "Your dashboard password was changed" } } })).toBe(1);
    });

    it("spends the email's sign-in budget on a wrong current password", async () => {
      const b = await browser("support");
      for (let i = 0; i < 5; i++) await change(b, { c: `wrong ${i}`, n: NEW_PASSWORD });
      expect((await change(b, { c: PASSWORD, n: NEW_PASSWORD })).errors[0].extensions.code).toBe("rate_limited");
      expectError(await app.call("POST", "/dashboard/session", { key: null, body: { email: b.email, password: PASSWORD } }), 429, "rate_limited");
    });
  });

  it("records two-factor turned on and off", async () => {
    const b = await browser("viewer");
    const refused = await gql(b, "mutation { startTotpEnrollment { secret } }");
    expect(refused.errors[0].extensions).toMatchObject({ code: "reauthentication_required", param: "password" });
    const started = await gql(b, "mutation($p: String) { startTotpEnrollment(password: $p) { secret } }", { p: PASSWORD });
    expect(started.errors).toBeUndefined();
    const secret = started.data.startTotpEnrollment.secret;
    expect((await gql(b, "mutation($c: String!) { confirmTotp(code: $c) { codes } }", { c: totpCode(secret, Date.now()) })).errors).toBeUndefined();
    const off = await gql(b, "mutation($p: String, $c: String) { disableTotp(password: $p, code: $c) { totpEnabled } }", {
      p: PASSWORD,
      c: totpCode(secret, Date.now() + 30_000),
    });
    expect(off.errors).toBeUndefined();
    const events = await prisma().securityEvent.findMany({ where: { userId: b.userId }, orderBy: { createdAt: "asc" } });
    // The sign-in that opened the session is in the history too.
    expect(events.map((e) => e.type)).toEqual(["sign_in", "two_factor_enabled", "two_factor_disabled"]);
  });
});
