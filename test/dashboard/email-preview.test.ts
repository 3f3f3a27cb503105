// An email's HTML for the dashboard's preview frame (src/dashboard/email-preview.ts): with the session
// cookie only, the session's merchant and mode only, as it arrived (the inline logo drawn), and served
// as untrusted markup: a CSP sandbox, no script, framed by the dashboard alone.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { writeEmail } from "../helpers/email-rows.js";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";

const PASSWORD = "correct horse battery";
let app: TestApp;
let email: string;

beforeAll(async () => {
  app = await startApp();
  email = (
    await createUser(app.db.prisma, app.merchant.merchant.id, { email: `preview-${randomBytes(4).toString("hex")}@example.com`, password: PASSWORD }, OPERATOR)
  ).email;
}, 60_000);
afterAll(() => app?.stop());

/** A signed-in browser's cookie, in `mode`. */
async function session(mode: "test" | "live"): Promise<string> {
  const res = await app.call("POST", "/dashboard/session", { key: null, body: { email, password: PASSWORD, mode } });
  expect(res.status, res.text).toBe(201);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

const preview = (id: string, cookie?: string, headers: Record<string, string> = {}) =>
  app.call("GET", `/dashboard/emails/${id}/html`, { key: null, headers: { ...(cookie && { cookie }), ...headers } });

describe("GET /dashboard/emails/:id/html", () => {
  it("serves the HTML as it arrived, sandboxed, to the session's merchant and mode", async () => {
    const logo = Buffer.from("89504e470d0a1a0a", "hex");
    await app.db.prisma.merchant.update({ where: { id: app.merchant.merchant.id }, data: { logo: new Uint8Array(logo), logoType: "image/png" } });
    const id = await writeEmail(app.db.prisma, app.merchant.merchant.id, { heading: "Invoice INV-7", inlineLogo: true });
    const res = await preview(id, await session("test"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp.split("; ")).toEqual(expect.arrayContaining(["sandbox", "default-src 'none'", "img-src data:", "frame-ancestors 'self'"]));
    expect(csp).not.toContain("script-src");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.text).toContain("Invoice INV-7</h1>");
    expect(res.text).toContain(`src="data:image/png;base64,${logo.toString("base64")}"`);
    expect(res.text).not.toContain("cid:logo");
  });

  it("refuses without a session, from another origin, and for another merchant's, the other mode's or the operator's email", async () => {
    const mine = await writeEmail(app.db.prisma, app.merchant.merchant.id);
    expectError(await preview(mine), 401, "session_invalid");
    const cookie = await session("test");
    expectError(await preview(mine, cookie, { origin: "https://evil.example" }), 403, "csrf_token_invalid");
    const other = await app.newMerchant();
    for (const id of [
      await writeEmail(app.db.prisma, other.merchant.id),
      await writeEmail(app.db.prisma, app.merchant.merchant.id, { livemode: true }),
      await writeEmail(app.db.prisma, null, { type: "alert" }),
    ]) {
      expectError(await preview(id, cookie), 404, "resource_missing", "id");
    }
    expectError(await preview(mine, await session("live")), 404, "resource_missing", "id");
  });
});
