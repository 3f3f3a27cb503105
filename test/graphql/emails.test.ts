// Emails over GraphQL: the same reads as REST's /v1/emails (one domain module), the HTML part as it
// arrived (the inline logo drawn as a data: URL) for the dashboard's preview, and whether this
// service sends emails at all (emailSending).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/harness.js";
import { writeEmail } from "../helpers/email-rows.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const FIELDS = "id livemode type to subject status relatedId attempts lastError text html createdAt sentAt";
const nodeIds = (conn: { edges: { node: { id: string } }[] }) => conn.edges.map((e) => e.node.id);

describe("emails", () => {
  it("shows an email as REST does, with its HTML part", async () => {
    const id = await writeEmail(app.db.prisma, app.merchant.merchant.id, {
      type: "refund_claim",
      to: "buyer@example.com",
      subject: "Your refund",
      heading: "Your refund",
      paragraphs: ["<script>alert(1)</script> is kept as text"],
      relatedId: "ref_1",
      status: "HELD",
    });
    const res = await app.gql(`query($id: ID!) { email(id: $id) { ${FIELDS} } }`, { id });
    expect(res.errors).toBeUndefined();
    const email = res.data.email;
    const rest = (await app.call("GET", `/v1/emails/${id}`)).body;
    expect(email).toMatchObject({
      id,
      livemode: false,
      type: "REFUND_CLAIM",
      to: rest.to,
      subject: rest.subject,
      status: "HELD",
      relatedId: "ref_1",
      attempts: 0,
      lastError: null,
      text: rest.text,
      createdAt: rest.createdAt,
      sentAt: null,
    });
    expect(rest.status).toBe("held");
    expect(email.html).toContain("<h1");
    expect(email.html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(email.html).not.toContain("<script>");
    const node = await app.gql(`query($id: ID!) { node(id: $id) { ... on Email { subject } } }`, { id });
    expect(node.data.node).toEqual({ subject: "Your refund" });
  });

  it("draws the merchant's logo where the email shows it inline", async () => {
    const merchant = await app.newMerchant();
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    await app.db.prisma.merchant.update({ where: { id: merchant.merchant.id }, data: { logo: png, logoType: "image/png" } });
    const withLogo = await writeEmail(app.db.prisma, merchant.merchant.id, { inlineLogo: true });
    const without = await writeEmail(app.db.prisma, merchant.merchant.id, { inlineLogo: false });
    const res = await app.gql(`{ emails(first: 10) { edges { node { id html } } } }`, {}, merchant.apiKeys.test.secret);
    const html = new Map(res.data.emails.edges.map((e: { node: { id: string; html: string } }) => [e.node.id, e.node.html]));
    expect(html.get(withLogo)).toContain(`src="data:image/png;base64,${png.toString("base64")}"`);
    expect(html.get(withLogo)).not.toContain("cid:logo");
    expect(html.get(without)).not.toContain("<img");
  });

  it("lists with the REST filters and paging; another merchant, mode or the operator shows nothing", async () => {
    const merchant = await app.newMerchant();
    const key = merchant.apiKeys.test.secret;
    const m = merchant.merchant.id;
    const invoice = await writeEmail(app.db.prisma, m, { type: "invoice", to: "ada@example.com", status: "SENT" });
    const reset = await writeEmail(app.db.prisma, m, { type: "password_reset", to: "team@example.com" });
    const invite = await writeEmail(app.db.prisma, m, { type: "invitation", to: "ada@example.com", status: "FAILED", lastError: "550 no" });
    await writeEmail(app.db.prisma, m, { livemode: true });
    await writeEmail(app.db.prisma, null, { type: "alert", to: "ops@example.com" });
    const list = async (args: string) => {
      const res = await app.gql(`{ emails(${args}) { totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } }`, {}, key);
      expect(res.errors).toBeUndefined();
      return res.data.emails;
    };
    const all = await list("first: 10");
    expect(all.totalCount).toBe(3);
    expect(nodeIds(all).sort()).toEqual([invoice, reset, invite].sort());
    const firstTwo = await list("first: 2");
    expect(firstTwo.pageInfo.hasNextPage).toBe(true);
    const rest = await list(`first: 2, after: "${firstTwo.pageInfo.endCursor}"`);
    expect([...nodeIds(firstTwo), ...nodeIds(rest)]).toEqual(nodeIds(all));
    expect(nodeIds(await list(`to: "ADA@example.com", first: 10`)).sort()).toEqual([invoice, invite].sort());
    expect(nodeIds(await list("type: PASSWORD_RESET"))).toEqual([reset]);
    const failed = await list("status: FAILED");
    expect([nodeIds(failed), failed.totalCount]).toEqual([[invite], 1]);
    const other = await app.gql(`query($id: ID!) { email(id: $id) { id } }`, { id: invoice });
    expect(other.errors?.[0].extensions).toMatchObject({ code: "resource_missing" });
    expect((await app.gql(`query($id: ID!) { node(id: $id) { id } }`, { id: invoice })).data.node).toBeNull();
  });

  it("refuses a bad filter naming it, and callers without a key or session", async () => {
    const bad = await app.gql(`{ emails(type: NEWSLETTER) { totalCount } }`);
    expect(bad.errors?.[0].extensions).toMatchObject({ code: "parameter_invalid" });
    const badVar = await app.gql(`query($s: EmailStatus) { emails(status: $s) { totalCount } }`, { s: "sent" });
    expect(badVar.errors?.[0].extensions).toMatchObject({ code: "parameter_invalid", param: "s" });
    for (const query of [`{ emails { totalCount } }`, `{ emailSending { configured } }`]) {
      expect((await app.gql(query, {}, null)).errors?.[0].extensions).toMatchObject({ code: "api_key_missing" });
    }
  });
});

describe("emailSending", () => {
  it("says emails are not sent without SMTP_URL, and from which address", async () => {
    const res = await app.gql(`{ emailSending { configured from } }`);
    expect(res.data.emailSending).toEqual({ configured: false, from: expect.stringMatching(/^no-reply@/) });
  });

  it("says they are sent with SMTP_URL, from EMAIL_FROM", async () => {
    const smtp = await startApp({ SMTP_URL: "smtp://user:secret@127.0.0.1:2525", EMAIL_FROM: "billing@shop.example" });
    try {
      const res = await smtp.gql(`{ emailSending { configured from } }`);
      expect(res.data.emailSending).toEqual({ configured: true, from: "billing@shop.example" });
      expect(JSON.stringify(res)).not.toContain("secret");
    } finally {
      await smtp.stop();
    }
  });
});
