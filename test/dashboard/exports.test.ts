// The dashboard's CSV downloads (src/dashboard/exports.ts): GET /dashboard/exports/balance_transactions.csv
// and /dashboard/exports/charges.csv with the session cookie, in the session's mode, the same lines as
// REST's export (GET /v1/…/export.csv) for that mode; 401 without a session, 403 from another origin, 409 for a page in
// the other mode, 400 naming a bad parameter.
import { randomBytes } from "node:crypto";
import { getAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";
import { expectError, liveChains, POLLING, startApp, type TestApp } from "../helpers/harness.js";

const PASSWORD = "correct horse battery";
const BUYER = getAddress("0x00000000000000000000000000000000000b0b03");
const T0 = Date.parse("2026-06-01T08:00:00.000Z");

let app: TestApp;
let email: string;
let testCharge: string;
let liveCharge: string;

beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
  email = (
    await createUser(app.db.prisma, app.merchant.merchant.id, { email: `exports-${randomBytes(4).toString("hex")}@example.com`, password: PASSWORD }, OPERATOR)
  ).email;
  const test = await chargeOn(app, app.testKey, 31337, "6.00");
  testCharge = test.id;
  const devnet = new ChainHistory(app, 31337);
  await devnet.sees({ from: BUYER, to: test.address, amount: "6.00" });
  await devnet.confirm(new Date(T0));
  const live = await chargeOn(app, app.liveKey, 8453, "9.00");
  liveCharge = live.id;
  const base = new ChainHistory(app, 8453, false);
  await base.sees({ from: BUYER, to: live.address, amount: "9.00" });
  await base.confirm(new Date(T0 + 60_000));
}, 60_000);
afterAll(() => app?.stop());

/** A signed-in browser's cookie, in `mode`. */
async function session(mode: "test" | "live"): Promise<string> {
  const res = await app.call("POST", "/dashboard/session", { key: null, body: { email, password: PASSWORD, mode } });
  expect(res.status, res.text).toBe(201);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

const download = (path: string, cookie?: string, headers: Record<string, string> = {}) =>
  app.call("GET", `/dashboard/exports/${path}`, { key: null, headers: { ...(cookie && { cookie }), ...headers } });

/** REST's export of the same thing in a mode, to compare with. */
const rest = async (path: string, key: string) => (await app.call("GET", path, { key })).text;

describe("dashboard CSV exports", () => {
  it("refuses a download without a session (401), from another origin (403) or for a page in the other mode (409)", async () => {
    for (const name of ["balance_transactions", "charges"]) {
      expectError(await download(`${name}.csv`), 401, "session_invalid");
      expectError(await download(`${name}.csv`, "sg_session=sgs_notarealsession"), 401, "session_invalid");
    }
    const cookie = await session("test");
    expectError(await download("charges.csv", cookie, { origin: "https://evil.example" }), 403, "csrf_token_invalid");
    expectError(await download("balance_transactions.csv?mode=live", cookie), 409, "session_mode_changed", "mode");
  });

  it("downloads the session's mode only, as REST's export writes it", async () => {
    const test = await session("test");
    const ledger = await download("balance_transactions.csv?mode=test", test);
    expect(ledger.status, ledger.text).toBe(200);
    expect(ledger.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(ledger.headers.get("content-disposition")).toBe('attachment; filename="balance_transactions_test.csv"');
    expect(ledger.headers.get("cache-control")).toBe("no-store");
    expect(ledger.text).toBe(await rest("/v1/balance_transactions/export.csv", app.testKey));
    expect(ledger.text.split("\r\n")[1]).toMatch(new RegExp(`^btx_\\w+,payment,6\\.00,${testCharge},`));
    const charges = await download("charges.csv", test);
    expect(charges.text).toBe(await rest("/v1/charges/export.csv", app.testKey));
    expect(charges.text).toContain(testCharge);
    expect(charges.text).not.toContain(liveCharge);

    const live = await session("live");
    const liveLedger = await download("balance_transactions.csv?mode=live", live);
    expect(liveLedger.headers.get("content-disposition")).toBe('attachment; filename="balance_transactions_live.csv"');
    expect(liveLedger.text).toBe(await rest("/v1/balance_transactions/export.csv", app.liveKey));
    expect(liveLedger.text).toContain(liveCharge);
    expect(liveLedger.text).not.toContain(testCharge);
    const liveCharges = await download("charges.csv?mode=live", live);
    expect(liveCharges.text).toContain(liveCharge);
    expect(liveCharges.text).not.toContain(testCharge);
  });

  it("takes the period and filters, and names a bad one", async () => {
    const cookie = await session("test");
    const lines = async (query: string) => (await download(`balance_transactions.csv?${query}`, cookie)).text.split("\r\n").filter(Boolean);
    expect(await lines(`createdGte=${new Date(T0).toISOString()}&createdLt=${new Date(T0 + 1).toISOString()}`)).toHaveLength(2);
    expect(await lines(`createdLt=${new Date(T0).toISOString()}`)).toHaveLength(1);
    expect(await lines("type=fee")).toHaveLength(1);
    expectError(await download("balance_transactions.csv?createdGte=last-week", cookie), 400, "parameter_invalid", "createdGte");
    expectError(await download("charges.csv?createdLt=2026-13-01T00:00:00Z", cookie), 400, "parameter_invalid", "createdLt");
    expectError(await download("charges.csv?bogus=1", cookie), 400, "parameter_unknown", "bogus");
  });
});
