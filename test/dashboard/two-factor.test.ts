// Two-factor sign-in (.docs/dashboard.md "Safety rails"): a TOTP code is good once (sign-in, re-authentication,
// turning it off, confirming), parallel uses of one code pass once; confirming gives ten one-time
// recovery codes (only hashes stored) that stand in for a code anywhere one is asked, and can be
// replaced after a re-authentication; wrong codes count toward the email's sign-in lock-out; setup
// shows the otpauth:// URI as a QR code that a scanner reads.
import { randomBytes } from "node:crypto";
import jsQR from "jsqr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptSecondFactor, acceptTotp } from "../../src/domain/two-factor.js";
import { totpCode, totpStep } from "../../src/domain/totp.js";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { expectError, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const PASSWORD = "correct horse battery";
const RUN = randomBytes(4).toString("hex");
const STEP_MS = 30_000;

// jsqr is CommonJS: its function is the default export under Node's interop, or the module itself.
const decode = ((jsQR as unknown as { default?: unknown }).default ?? jsQR) as (d: Uint8ClampedArray, w: number, h: number) => { data: string } | null;

/** What a scanner reads from an SVG QR code: its modules rasterised, 4 pixels each, read by jsQR. */
function readQr(svg: string): string | null {
  const size = Number(/viewBox="0 0 (\d+) /.exec(svg)![1]);
  const width = size * 4;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (const [, x, y] of svg.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) {
    for (let dy = 0; dy < 4; dy++)
      for (let dx = 0; dx < 4; dx++) {
        const i = ((Number(y) * 4 + dy) * width + Number(x) * 4 + dx) * 4;
        pixels[i] = pixels[i + 1] = pixels[i + 2] = 0;
      }
  }
  return decode(pixels, width, width)?.data ?? null;
}

interface Browser {
  cookie: string;
  csrf: string;
  userId: string;
  email: string;
}

describe("two-factor sign-in", () => {
  let app: TestApp;
  let n = 0;
  beforeAll(async () => {
    app = await startApp(POLLING);
  }, 60_000);
  afterAll(() => app?.stop());

  const signIn = (body: Record<string, unknown>) => app.call("POST", "/dashboard/session", { key: null, body });
  const browser = async (): Promise<Browser> => {
    const user = await createUser(app.db.prisma, app.merchant.merchant.id, { email: `tfa${++n}-${RUN}@example.com`, password: PASSWORD }, OPERATOR);
    const res = await signIn({ email: user.email, password: PASSWORD });
    expect(res.status, res.text).toBe(201);
    return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: res.body.csrfToken, userId: user.id, email: user.email };
  };
  const gql = async (b: Browser, query: string, variables?: Record<string, unknown>) =>
    (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } })).body;
  const reauthenticate = (b: Browser, body: Record<string, unknown>) =>
    app.call("POST", "/dashboard/session/reauthenticate", { key: null, body, headers: { cookie: b.cookie, "x-csrf-token": b.csrf } });
  /** Sets two-factor up through GraphQL as the dashboard does; returns the secret and the recovery codes. */
  const enroll = async (b: Browser) => {
    const {
      secret,
      uri,
      qrSvg: svg,
    } = (await gql(b, "mutation($p: String) { startTotpEnrollment(password: $p) { secret uri qrSvg } }", { p: PASSWORD })).data.startTotpEnrollment;
    const confirmed = await gql(b, "mutation($c: String!) { confirmTotp(code: $c) { codes user { totpEnabled recoveryCodesRemaining } } }", {
      c: totpCode(secret, Date.now()),
    });
    expect(confirmed.errors, JSON.stringify(confirmed.errors)).toBeUndefined();
    return { secret, uri, svg, codes: confirmed.data.confirmTotp.codes as string[], user: confirmed.data.confirmTotp.user };
  };

  it("matches a code to its step, one step of drift either way, and nothing else", () => {
    const secret = "JBSWY3DPEHPK3PXP";
    const at = Date.parse("2030-01-01T00:00:10Z");
    const step = Math.floor(at / STEP_MS);
    expect(totpStep(secret, totpCode(secret, at), at)).toBe(step);
    expect(totpStep(secret, totpCode(secret, at - STEP_MS), at)).toBe(step - 1);
    expect(totpStep(secret, totpCode(secret, at + STEP_MS), at)).toBe(step + 1);
    expect(totpStep(secret, totpCode(secret, at + 2 * STEP_MS), at)).toBeNull();
    expect(totpStep(secret, "12345", at)).toBeNull();
  });

  it("accepts a TOTP code once, no older one after it, and one of parallel uses of a code", async () => {
    const b = await browser();
    const secret = "JBSWY3DPEHPK3PXP";
    await app.db.prisma.user.update({ where: { id: b.userId }, data: { totpSecret: secret } });
    const now = new Date();
    const code = totpCode(secret, now.getTime());
    expect(await acceptTotp(app.db.prisma, b.userId, secret, code, now)).toBe(true);
    expect(await acceptTotp(app.db.prisma, b.userId, secret, code, now)).toBe(false);
    // The previous step's code is still within the drift window, but older than the one used.
    expect(await acceptTotp(app.db.prisma, b.userId, secret, totpCode(secret, now.getTime() - STEP_MS), now)).toBe(false);
    const next = totpCode(secret, now.getTime() + STEP_MS);
    const answers = await Promise.all(Array.from({ length: 6 }, () => acceptTotp(app.db.prisma, b.userId, secret, next, now)));
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: b.userId } })).totpLastStep).toBe(Math.floor(now.getTime() / STEP_MS) + 1);
  });

  it("shows the otpauth:// URI as a QR code: an SVG a scanner reads back, with nothing of the text as markup", async () => {
    const b = await browser();
    const { uri, svg } = await enroll(b);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 (\d+) \1" shape-rendering="crispEdges">/);
    expect(svg).not.toContain("@");
    expect(svg).not.toContain("otpauth");
    expect(readQr(svg)).toBe(uri);
  });

  it("refuses a replayed code at sign-in, and the code that confirmed two-factor", async () => {
    const b = await browser();
    const { secret } = await enroll(b);
    // The confirming code was for this step: it cannot sign in too.
    expectError(await signIn({ email: b.email, password: PASSWORD, totpCode: totpCode(secret, Date.now()) }), 401, "sign_in_failed", "totpCode");
    const next = totpCode(secret, Date.now() + STEP_MS);
    expect((await signIn({ email: b.email, password: PASSWORD, totpCode: next })).status).toBe(201);
    const replay = await signIn({ email: b.email, password: PASSWORD, totpCode: next });
    expectError(replay, 401, "sign_in_failed", "totpCode");
    expect(replay.body.message).toMatch(/already used/);
  });

  it("gives ten one-time recovery codes, stores only their hashes, and takes each once wherever a code is asked", async () => {
    const b = await browser();
    const { codes, user } = await enroll(b);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
    expect(user).toEqual({ totpEnabled: true, recoveryCodesRemaining: 10 });
    const stored = JSON.stringify(await app.db.prisma.recoveryCode.findMany({ where: { userId: b.userId } }));
    for (const code of codes) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(code.replace("-", ""));
    }

    // Sign-in: once, typed in upper case without the dash as well.
    const signedIn = await signIn({ email: b.email, password: PASSWORD, totpCode: codes[0]!.replace("-", "").toUpperCase() });
    expect(signedIn.status, signedIn.text).toBe(201);
    expectError(await signIn({ email: b.email, password: PASSWORD, totpCode: codes[0] }), 401, "sign_in_failed", "totpCode");
    // Re-authentication: once.
    expect((await reauthenticate(b, { password: PASSWORD, totpCode: codes[1] })).status).toBe(200);
    expectError(await reauthenticate(b, { password: PASSWORD, totpCode: codes[1] }), 403, "reauthentication_required", "totpCode");
    expect((await gql(b, "{ viewer { user { recoveryCodesRemaining } } }")).data.viewer.user.recoveryCodesRemaining).toBe(8);

    // New codes need a re-authentication; the old ones stop working.
    const regenerate = "mutation($p: String, $c: String) { regenerateRecoveryCodes(password: $p, totpCode: $c) { codes user { recoveryCodesRemaining } } }";
    await app.db.prisma.dashboardSession.updateMany({ where: { userId: b.userId }, data: { reauthenticatedAt: null } });
    expect((await gql(b, regenerate)).errors[0].extensions).toMatchObject({ code: "reauthentication_required", param: "password" });
    const fresh = await gql(b, regenerate, { p: PASSWORD, c: codes[2] });
    expect(fresh.errors).toBeUndefined();
    expect(fresh.data.regenerateRecoveryCodes.user.recoveryCodesRemaining).toBe(10);
    const newCodes: string[] = fresh.data.regenerateRecoveryCodes.codes;
    expect(newCodes.some((c) => codes.includes(c))).toBe(false);
    expectError(await signIn({ email: b.email, password: PASSWORD, totpCode: codes[3] }), 401, "sign_in_failed", "totpCode");

    // Turning two-factor off: with a recovery code, and the codes go with it.
    const off = await gql(b, "mutation($p: String, $c: String) { disableTotp(password: $p, code: $c) { totpEnabled recoveryCodesRemaining } }", {
      p: PASSWORD,
      c: newCodes[0],
    });
    expect(off.data.disableTotp).toEqual({ totpEnabled: false, recoveryCodesRemaining: 0 });
  });

  it("refuses a recovery code of another user", async () => {
    const a = await browser();
    const b = await browser();
    const { codes } = await enroll(a);
    const { user } = await enroll(b);
    expect(user.totpEnabled).toBe(true);
    const row = await app.db.prisma.user.findUniqueOrThrow({ where: { id: b.userId } });
    expect(await acceptSecondFactor(app.db.prisma, row, codes[0]!)).toBe(false);
    expect(await acceptSecondFactor(app.db.prisma, await app.db.prisma.user.findUniqueOrThrow({ where: { id: a.userId } }), codes[0]!)).toBe(true);
  });

  it("locks the email after 5 wrong codes at sign-in, the right password with each", async () => {
    const b = await browser();
    const { secret } = await enroll(b);
    const wrong = (i: number) => totpCode(secret, Date.now() + (10 + i) * 60_000);
    for (let i = 0; i < 5; i++) expectError(await signIn({ email: b.email, password: PASSWORD, totpCode: wrong(i) }), 401, "sign_in_failed", "totpCode");
    const locked = await signIn({ email: b.email, password: PASSWORD, totpCode: totpCode(secret, Date.now() + STEP_MS) });
    expectError(locked, 429, "rate_limited");
    expect(locked.body.message).toMatch(/Too many failed sign-ins for this email/);
  });

  it("counts wrong codes on disableTotp and re-authentication toward the same lock-out", async () => {
    const b = await browser();
    const { secret } = await enroll(b);
    const disable = "mutation($p: String, $c: String) { disableTotp(password: $p, code: $c) { totpEnabled } }";
    for (let i = 0; i < 3; i++) {
      const res = await gql(b, disable, { p: PASSWORD, c: `bad-code-${i}` });
      expect(res.errors[0].extensions).toMatchObject({ code: "reauthentication_required", param: "code" });
    }
    for (let i = 0; i < 2; i++) expectError(await reauthenticate(b, { password: PASSWORD, totpCode: "000000" }), 403, "reauthentication_required", "totpCode");
    const locked = await gql(b, disable, { p: PASSWORD, c: totpCode(secret, Date.now() + STEP_MS) });
    expect(locked.errors[0].extensions).toMatchObject({ code: "rate_limited", statusCode: 429 });
    expectError(await signIn({ email: b.email, password: PASSWORD, totpCode: totpCode(secret, Date.now() + STEP_MS) }), 429, "rate_limited");
    expect((await app.db.prisma.user.findUniqueOrThrow({ where: { id: b.userId } })).totpSecret).toBe(secret);
  });
});
