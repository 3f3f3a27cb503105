// The ledger over REST (.docs/ledger.md): GET /v1/balance_transactions (newest first, cursor paging,
// the filters, and its CSV export at /export.csv), GET /v1/balance_transactions/:id and GET /v1/balance, on rows the real
// posting code wrote: chain transfers matched and recorded as the indexer does (no RPC), confirmed by
// confirmChainMoney, one reversed by reverseTransfers, a refund made over the API and paid on chain.
import { getAddress, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csvField } from "../../src/domain/csv.js";
import { newId } from "../../src/domain/ids.js";
import { reverseTransfers } from "../../src/domain/reversals.js";
import { ChainHistory, chargeOn } from "../helpers/ledger.js";
import { expectError, liveChains, POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const DEVNET = 31337;
const BASE_SEPOLIA = 84532;
const BASE = 8453;
const BUYER = getAddress("0x00000000000000000000000000000000000b0b01");
const FEE_WALLET = getAddress("0x00000000000000000000000000000000000fee01");
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
/** The ledger's clock: confirmations happen at T0 + `minutes`. */
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const AMOUNT = /^-?\d+\.\d{2,6}$/;

interface Row {
  id: string;
  object: string;
  livemode: boolean;
  type: string;
  amount: string;
  chargeId: string;
  refundId: string | null;
  invoiceId: string | null;
  chainId: number;
  txHash: string;
  blockNumber: number;
  reversesId: string | null;
  createdAt: string;
}

let app: TestApp;
let devnet: ChainHistory;
let sepolia: ChainHistory;
const ids = { a: "", b: "", c: "", live: "", other: "", refund: "", otherRow: "", liveRow: "" };
let otherKey: string;
/** Every test-mode row of the main merchant, as GET /v1/balance_transactions?limit=100 lists them. */
let all: Row[];

beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
  devnet = new ChainHistory(app, DEVNET);
  sepolia = new ChainHistory(app, BASE_SEPOLIA);
  const base = new ChainHistory(app, BASE, false);

  // A: paid in full, paid out with its fee, then partly refunded from the merchant's wallet.
  const a = await chargeOn(app, app.testKey, DEVNET, "25.00");
  ids.a = a.id;
  await devnet.sees({ from: BUYER, to: a.address, amount: "25.00" });
  await devnet.confirm(at(0));
  await devnet.paysOut(a.address, "25.00", FEE_WALLET);
  await devnet.confirm(at(10));
  const refund = await app.call("POST", `/v1/charges/${a.id}/refunds`, { body: { amount: "5.00", address: BUYER } });
  expect(refund.status, refund.text).toBe(201);
  ids.refund = refund.body.id;
  await devnet.sees({ from: WALLET, to: BUYER, amount: "5.00" });
  await devnet.confirm(at(20));

  // B: partly paid; more is seen later and never confirmed (money on its way).
  const b = await chargeOn(app, app.testKey, DEVNET, "10.00");
  ids.b = b.id;
  await devnet.sees({ from: BUYER, to: b.address, amount: "4.00" });
  await devnet.confirm(at(30));

  // C, on another chain: paid, paid out, and then a reorg deeper than the confirmations takes the payout away.
  const c = await chargeOn(app, app.testKey, BASE_SEPOLIA, "3.00");
  ids.c = c.id;
  await sepolia.sees({ from: BUYER, to: c.address, amount: "3.00" });
  await sepolia.confirm(at(40));
  await sepolia.paysOut(c.address, "3.00", FEE_WALLET);
  await sepolia.confirm(at(50));
  const payout = await app.db.prisma.chainTransfer.findFirstOrThrow({ where: { chargeId: c.id, kind: "PAYOUT" } });
  expect(await reverseTransfers(app.db.prisma, SETTINGS, [payout.id], "test reorg", at(60))).toHaveLength(1);

  // Another merchant's payment on the same chain, and a live-mode payment of the main merchant.
  const other = await app.newMerchant();
  otherKey = other.apiKeys.test.secret;
  const o = await chargeOn(app, otherKey, DEVNET, "2.00");
  ids.other = o.id;
  await devnet.sees({ from: BUYER, to: o.address, amount: "2.00" });
  await devnet.confirm(at(35));
  const live = await chargeOn(app, app.liveKey, BASE, "7.00");
  ids.live = live.id;
  await base.sees({ from: BUYER, to: live.address, amount: "7.00" });
  await base.confirm(at(45));

  await devnet.sees({ from: BUYER, to: b.address, amount: "1.00" });

  ids.otherRow = (await app.call("GET", "/v1/balance_transactions", { key: otherKey })).body.data[0].id;
  ids.liveRow = (await app.call("GET", "/v1/balance_transactions", { key: app.liveKey })).body.data[0].id;
  const res = await app.call("GET", "/v1/balance_transactions?limit=100");
  expect(res.status, res.text).toBe(200);
  all = res.body.data;
}, 60_000);
afterAll(() => app?.stop());

const list = async (query: string, key?: string) => {
  const res = await app.call("GET", `/v1/balance_transactions${query}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body as { object: string; data: Row[]; hasMore: boolean };
};
const idsOf = (rows: Row[]) => rows.map((r) => r.id);
const csv = (query: string, key = app.testKey) => fetch(`${app.url}/v1/balance_transactions/export.csv${query}`, { headers: { "x-api-key": key } });

describe("GET /v1/balance_transactions", () => {
  it("lists every row of the merchant and mode, newest first, amounts as signed decimal strings", () => {
    const summary = all.map((r) => [r.chargeId, r.type, r.amount, r.createdAt]);
    const iso = (m: number) => at(m).toISOString();
    // Rows posted together (a payout and its fee) share a time; their order is by id, as the cursor's.
    const payoutAndFee = (chargeId: string, net: string, fee: string, m: number) =>
      expect.arrayContaining([
        [chargeId, "payout", net, iso(m)],
        [chargeId, "fee", fee, iso(m)],
      ]);
    expect(summary[0]).toEqual([ids.c, "reversal", "2.97", iso(60)]);
    expect(summary.slice(1, 3)).toEqual(payoutAndFee(ids.c, "-2.97", "-0.03", 50));
    expect(summary.slice(3, 6)).toEqual([
      [ids.c, "payment", "3.00", iso(40)],
      [ids.b, "payment", "4.00", iso(30)],
      [ids.a, "refund", "-5.00", iso(20)],
    ]);
    expect(summary.slice(6, 8)).toEqual(payoutAndFee(ids.a, "-24.75", "-0.25", 10));
    expect(summary.slice(8)).toEqual([[ids.a, "payment", "25.00", iso(0)]]);
    for (const [i, r] of all.entries()) {
      expect(r).toMatchObject({ object: "balance_transaction", livemode: false, id: expect.stringMatching(/^btx_[0-9A-Za-z]{24}$/) });
      expect(typeof r.amount).toBe("string");
      expect(r.amount).toMatch(AMOUNT);
      expect(typeof r.blockNumber).toBe("number");
      const next = all[i + 1];
      if (next) expect(r.createdAt > next.createdAt || (r.createdAt === next.createdAt && r.id > next.id), `${r.id} before ${next.id}`).toBe(true);
    }
    // The refund row names its refund; the reversal names the payout it undoes and carries its chain and transaction.
    expect(all.find((r) => r.type === "refund")).toMatchObject({ refundId: ids.refund, chainId: DEVNET });
    const reversal = all[0]!;
    const undone = all.find((r) => r.id === reversal.reversesId)!;
    expect(undone).toMatchObject({ type: "payout", chargeId: ids.c, amount: "-2.97", reversesId: null });
    expect(reversal).toMatchObject({ chainId: BASE_SEPOLIA, txHash: undone.txHash, blockNumber: undone.blockNumber });
    expect(all.filter((r) => r.type !== "reversal").every((r) => r.reversesId === null)).toBe(true);
  });

  it("pages by cursor: startingAfter and endingBefore, hasMore, no page overlapping another", async () => {
    const first = await list("?limit=4");
    expect(first).toMatchObject({ object: "list", hasMore: true });
    const second = await list(`?limit=4&startingAfter=${first.data.at(-1)!.id}`);
    expect(second.hasMore).toBe(true);
    const third = await list(`?limit=4&startingAfter=${second.data.at(-1)!.id}`);
    expect(third.hasMore).toBe(false);
    expect(idsOf([...first.data, ...second.data, ...third.data])).toEqual(idsOf(all));
    expect(third.data).toHaveLength(1);
    // Back from the second page's first row: the first page, with more before it said by hasMore.
    const back = await list(`?limit=4&endingBefore=${second.data[0]!.id}`);
    expect(idsOf(back.data)).toEqual(idsOf(first.data));
    expect(back.hasMore).toBe(false);
    const backShort = await list(`?limit=2&endingBefore=${second.data[0]!.id}`);
    expect(idsOf(backShort.data)).toEqual(idsOf(first.data.slice(2)));
    expect(backShort.hasMore).toBe(true);
    // The default page is 10.
    expect((await list("")).data).toHaveLength(Math.min(10, all.length));
    expect((await list(`?startingAfter=${all.at(-1)!.id}`)).data).toEqual([]);
  });

  it("filters by chargeId, refundId, type and creation time, alone and together", async () => {
    const only = (pred: (r: Row) => boolean) => idsOf(all.filter(pred));
    const byCharge = await list(`?chargeId=${ids.a}&limit=100`);
    expect(idsOf(byCharge.data)).toEqual(only((r) => r.chargeId === ids.a));
    expect(byCharge.data.map((r) => r.type).sort()).toEqual(["fee", "payment", "payout", "refund"]);
    expect(idsOf((await list(`?refundId=${ids.refund}`)).data)).toEqual(only((r) => r.refundId === ids.refund));
    expect((await list(`?refundId=${ids.refund}`)).data).toHaveLength(1);
    for (const type of ["payment", "fee", "payout", "refund", "reversal"]) {
      const rows = (await list(`?type=${type}&limit=100`)).data;
      expect(rows.length, type).toBeGreaterThan(0);
      expect(idsOf(rows), type).toEqual(only((r) => r.type === type));
    }
    // createdGte is inclusive, createdLt exclusive; any offset names the same instant.
    const window = await list(`?createdGte=${at(20).toISOString()}&createdLt=${encodeURIComponent("2026-03-01T11:50:00+01:00")}&limit=100`);
    expect(window.data.map((r) => r.createdAt)).toEqual([at(40), at(30), at(20)].map((d) => d.toISOString()));
    expect(idsOf((await list(`?createdLt=${at(10).toISOString()}`)).data)).toEqual(only((r) => r.createdAt < at(10).toISOString()));
    expect(idsOf((await list(`?createdGte=${at(50).toISOString()}`)).data)).toEqual(only((r) => r.createdAt >= at(50).toISOString()));
    // Together, and paged within the filter.
    expect(idsOf((await list(`?chargeId=${ids.c}&type=payout`)).data)).toEqual(only((r) => r.chargeId === ids.c && r.type === "payout"));
    const firstFee = await list(`?type=fee&limit=1`);
    expect(firstFee.hasMore).toBe(true);
    const secondFee = await list(`?type=fee&limit=1&startingAfter=${firstFee.data[0]!.id}`);
    expect([...idsOf(firstFee.data), ...idsOf(secondFee.data)]).toEqual(only((r) => r.type === "fee"));
    expect(secondFee.hasMore).toBe(false);
    // Another merchant's charge, or none: nothing.
    expect((await list(`?chargeId=${ids.other}`)).data).toEqual([]);
    expect((await list(`?chargeId=${newId("chrg")}`)).data).toEqual([]);
  });

  it("refuses a bad filter, limit or cursor with a 400 naming the parameter", async () => {
    const bad: [string, string, string][] = [
      ["type=bogus", "parameter_invalid", "type"],
      ["type=PAYMENT", "parameter_invalid", "type"],
      ["createdGte=yesterday", "parameter_invalid", "createdGte"],
      ["createdLt=2026-02-30T25:00:00Z", "parameter_invalid", "createdLt"],
      ["createdGte=1772359200", "parameter_invalid", "createdGte"],
      ["chargeId=", "parameter_invalid", "chargeId"],
      [`refundId=${"r".repeat(101)}`, "parameter_invalid", "refundId"],
      ["limit=0", "parameter_invalid", "limit"],
      ["limit=101", "parameter_invalid", "limit"],
      ["limit=1.5", "parameter_invalid", "limit"],
      ["format=xml", "parameter_invalid", "format"],
      ["currency=usdc", "parameter_unknown", "currency"],
      [`startingAfter=${all[0]!.id}&endingBefore=${all[1]!.id}`, "parameter_invalid", "endingBefore"],
    ];
    for (const [query, code, param] of bad) expectError(await app.call("GET", `/v1/balance_transactions?${query}`), 400, code, param);
    // A cursor names a row this key may list: unknown, another merchant's or the other mode's is 400 resource_missing.
    for (const id of [newId("btx"), ids.otherRow, ids.liveRow]) {
      expectError(await app.call("GET", `/v1/balance_transactions?startingAfter=${id}`), 400, "resource_missing", "startingAfter");
      expectError(await app.call("GET", `/v1/balance_transactions?endingBefore=${id}`), 400, "resource_missing", "endingBefore");
    }
  });
});

describe("GET /v1/balance_transactions/export.csv", () => {
  const HEADER = "id,type,amount,chargeId,refundId,invoiceId,chainId,txHash,blockNumber,reversesId,createdAt,livemode,x402Payer,x402Resource";
  const lines = async (res: Response) => {
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.endsWith("\r\n")).toBe(true);
    return text.slice(0, -2).split("\r\n");
  };
  const asLine = (r: Row) =>
    [
      r.id,
      r.type,
      r.amount,
      r.chargeId,
      r.refundId ?? "",
      r.invoiceId ?? "",
      r.chainId,
      r.txHash,
      r.blockNumber,
      r.reversesId ?? "",
      r.createdAt,
      r.livemode,
      // No x402 settlement among these rows (test/chain/x402.test.ts has them).
      "",
      "",
    ].join(",");

  it("answers text/csv: a header row, then one line per row in the list's order, of every page", async () => {
    const res = await csv("");
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="balance_transactions_test.csv"');
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const [header, ...rows] = await lines(res);
    expect(header).toBe(HEADER);
    expect(rows).toEqual(all.map(asLine));
    // Negative amounts stay numbers a spreadsheet can add up (not text, not quoted).
    expect(rows.some((l) => l.split(",")[2] === "-24.75")).toBe(true);
  });

  it("takes the list's filters", async () => {
    const [, ...fees] = await lines(await csv("?type=fee"));
    expect(fees).toEqual(all.filter((r) => r.type === "fee").map(asLine));
    const [, ...ofCharge] = await lines(await csv(`?chargeId=${ids.a}&createdGte=${at(10).toISOString()}&createdLt=${at(20).toISOString()}`));
    expect(ofCharge).toEqual(all.filter((r) => r.chargeId === ids.a && r.createdAt === at(10).toISOString()).map(asLine));
    expect(ofCharge).toHaveLength(2);
    const [header, ...none] = await lines(await csv(`?refundId=${newId("ref")}`));
    expect([header, none]).toEqual([HEADER, []]);
  });

  it("refuses a bad filter with the same JSON error, before any CSV", async () => {
    for (const [query, code, param] of [
      ["type=bogus", "parameter_invalid", "type"],
      ["createdLt=soon", "parameter_invalid", "createdLt"],
      // An export has every row: paging parameters are not its own.
      ["limit=2", "parameter_unknown", "limit"],
      [`startingAfter=${newId("btx")}`, "parameter_unknown", "startingAfter"],
    ] as const) {
      const res = await csv(`?${query}`);
      expect(res.headers.get("content-type"), query).toMatch(/^application\/json/);
      const body = await res.json();
      expect(res.status, query).toBe(400);
      expect(body, query).toMatchObject({ statusCode: 400, code, param });
    }
    expect((await csv("", "sk_test_nothing")).status).toBe(401);
  });

  it("is still answered at the list's path with format=csv (older integrations), limit ignored, a cursor refused", async () => {
    const legacy = (query: string) => fetch(`${app.url}/v1/balance_transactions?${query}`, { headers: { "x-api-key": app.testKey } });
    const res = await legacy("format=csv&limit=2&type=fee");
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(await lines(res)).toEqual(await lines(await csv("?type=fee")));
    for (const [query, code, param] of [
      ["format=csv&type=bogus", "parameter_invalid", "type"],
      ["format=csv&limit=0", "parameter_invalid", "limit"],
      // A cursor would be ignored by an export of every row: refused rather than silently dropped.
      [`format=csv&startingAfter=${newId("btx")}`, "parameter_invalid", "startingAfter"],
      [`format=csv&endingBefore=${newId("btx")}`, "parameter_invalid", "endingBefore"],
      ["format=pdf", "parameter_invalid", "format"],
    ] as const) {
      const refused = await legacy(query);
      expect(refused.status, query).toBe(400);
      expect(await refused.json(), query).toMatchObject({ code, param });
    }
  });

  it("writes no field a spreadsheet would run as a formula, and quotes what needs quoting", () => {
    expect(csvField('=HYPERLINK("http://evil.example","x")')).toBe(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(csvField("=1+2")).toBe("'=1+2");
    expect(csvField("+1+cmd|' /C calc'!A0")).toBe("'+1+cmd|' /C calc'!A0");
    expect(csvField("-2+3+cmd|' /C calc'!A0")).toBe("'-2+3+cmd|' /C calc'!A0");
    expect(csvField("@SUM(A1:A9)")).toBe("'@SUM(A1:A9)");
    expect(csvField("\t=1")).toBe("'\t=1");
    expect(csvField("\r=1")).toBe(`"'\r=1"`);
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    // What the ledger's columns hold stays as it is.
    expect(csvField("-24.75")).toBe("-24.75");
    expect(csvField("25.00")).toBe("25.00");
    expect(csvField(31337)).toBe("31337");
    expect(csvField(false)).toBe("false");
    expect(csvField(null)).toBe("");
    expect(csvField("btx_0aZ")).toBe("btx_0aZ");
  });

  it("exports more rows than one read takes, all at the same instant, each exactly once", async () => {
    const shop = await app.newMerchant();
    const key = shop.apiKeys.test.secret;
    // A chain of its own: confirming it confirms nothing of the other tests' data.
    const ethSepolia = new ChainHistory(app, 11155111);
    const charge = await chargeOn(app, key, 11155111, "100.00");
    const payments = Array.from({ length: 1_001 }, () => ({ from: BUYER, to: charge.address, amount: "0.01" }));
    await ethSepolia.sees(...payments);
    await ethSepolia.confirm(at(100));
    const [header, ...rows] = await lines(await csv("", key));
    expect(header).toBe(HEADER);
    expect(rows).toHaveLength(1_001);
    const rowIds = rows.map((l) => l.split(",")[0]!);
    expect(new Set(rowIds).size).toBe(1_001);
    expect(rowIds).toEqual([...rowIds].sort().reverse());
    expect(rows.every((l) => l.split(",")[2] === "0.01")).toBe(true);
    // The JSON pages walk the same rows through the tie.
    const paged: string[] = [];
    for (let after: string | undefined; ;) {
      const page = await list(`?limit=100${after ? `&startingAfter=${after}` : ""}`, key);
      paged.push(...idsOf(page.data));
      if (!page.hasMore) break;
      after = page.data.at(-1)!.id;
    }
    expect(paged).toEqual(rowIds);
    expect((await app.call("GET", `/v1/charges/${charge.id}`, { key })).body.amountReceived).toBe("10.01");
  });
});

describe("GET /v1/balance_transactions/:id", () => {
  it("retrieves a row as the list shows it", async () => {
    for (const row of [all[0]!, all.at(-1)!, all.find((r) => r.type === "refund")!]) {
      const res = await app.call("GET", `/v1/balance_transactions/${row.id}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual(row);
    }
  });

  it("is 404 resource_missing for an unknown id, another merchant's row and the other mode's; 400 for an id longer than any", async () => {
    for (const id of [newId("btx"), ids.otherRow, ids.liveRow])
      expectError(await app.call("GET", `/v1/balance_transactions/${id}`), 404, "resource_missing", "id");
    expectError(await app.call("GET", `/v1/balance_transactions/btx_${"x".repeat(300)}`), 400, "parameter_invalid", "id");
    // Each is its owner's to read.
    expect((await app.call("GET", `/v1/balance_transactions/${ids.otherRow}`, { key: otherKey })).status).toBe(200);
    expect((await app.call("GET", `/v1/balance_transactions/${ids.liveRow}`, { key: app.liveKey })).body).toMatchObject({ livemode: true, chainId: BASE });
    expectError(await app.call("GET", `/v1/balance_transactions/${all[0]!.id}`, { key: null }), 401, "api_key_missing");
  });
});

describe("GET /v1/balance", () => {
  /** Per chain, the sum of the rows of a kind (a reversal counts as the kind it undoes), as the balance shows it. */
  const sums = (kind: string) => {
    const kindOf = (r: Row): string => (r.type === "reversal" ? all.find((o) => o.id === r.reversesId)!.type : r.type);
    const byChain = new Map<number, bigint>();
    for (const r of all.filter((r) => kindOf(r) === kind)) byChain.set(r.chainId, (byChain.get(r.chainId) ?? 0n) + parseUnits(r.amount, 6));
    return [...byChain]
      .filter(([, units]) => units !== 0n)
      .sort(([a], [b]) => a - b)
      .map(([chainId, units]) => ({ chainId, amount: formatUsdc(-units) }));
  };
  const formatUsdc = (units: bigint) => {
    const sign = units < 0n ? "-" : "";
    const abs = units < 0n ? -units : units;
    const fraction = (abs % 1_000_000n)
      .toString()
      .padStart(6, "0")
      .replace(/0{1,4}$/, "");
    return `${sign}${abs / 1_000_000n}.${fraction}`;
  };

  it("shows per chain what the clones hold, what is on its way, and what was paid out, taken in fees and refunded", async () => {
    const res = await app.call("GET", "/v1/balance");
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      object: "balance",
      livemode: false,
      // A is all paid out; B holds its confirmed 4.00; C holds again the 2.97 whose payout a reorg took away.
      held: [
        { chainId: DEVNET, amount: "4.00" },
        { chainId: BASE_SEPOLIA, amount: "2.97" },
      ],
      onItsWay: [{ chainId: DEVNET, amount: "1.00" }],
      // A payout a reorg reversed sums to nothing on its chain: not listed.
      paidOut: [{ chainId: DEVNET, amount: "24.75" }],
      fees: [
        { chainId: DEVNET, amount: "0.25" },
        { chainId: BASE_SEPOLIA, amount: "0.03" },
      ],
      refunded: [{ chainId: DEVNET, amount: "5.00" }],
    });
    for (const kind of ["paidOut", "fees", "refunded"] as const) {
      expect(res.body[kind], kind).toEqual(sums({ paidOut: "payout", fees: "fee", refunded: "refund" }[kind]));
    }
    // What the clones hold is every row but the refunds (paid from the wallet), per chain.
    const held = sums("payment").map((p) => {
      const out = [...sums("payout"), ...sums("fee")].filter((o) => o.chainId === p.chainId);
      const units = out.reduce((s, o) => s - parseUnits(o.amount, 6), -parseUnits(p.amount, 6));
      return { chainId: p.chainId, amount: formatUsdc(units) };
    });
    expect(held.filter((h) => h.amount !== "0.00")).toEqual(res.body.held);
    for (const list of Object.values(res.body).filter(Array.isArray)) {
      for (const entry of list as { amount: unknown }[]) expect(entry.amount).toMatch(AMOUNT);
    }
  });

  it("agrees with the charges' money fields, each the sum of its rows", async () => {
    const a = (await app.call("GET", `/v1/charges/${ids.a}`)).body;
    expect(a).toMatchObject({ status: "COMPLETED", amountReceived: "25.00", netAmount: "24.75", feeAmount: "0.25", amountRefunded: "5.00" });
    const c = (await app.call("GET", `/v1/charges/${ids.c}`)).body;
    expect(c).toMatchObject({ amountReceived: "3.00", netAmount: "0.00", feeAmount: "0.03", needsReview: true });
    const refund = (await app.call("GET", `/v1/refunds/${ids.refund}`)).body;
    expect(refund).toMatchObject({ status: "COMPLETED", amount: "5.00" });
  });

  it("is the key's mode only: the live key sees the live payment, the test key never", async () => {
    const live = await app.call("GET", "/v1/balance", { key: app.liveKey });
    expect(live.body).toEqual({
      object: "balance",
      livemode: true,
      held: [{ chainId: BASE, amount: "7.00" }],
      onItsWay: [],
      paidOut: [],
      fees: [],
      refunded: [],
    });
    const other = await app.call("GET", "/v1/balance", { key: otherKey });
    expect(other.body).toMatchObject({ livemode: false, held: [{ chainId: DEVNET, amount: "2.00" }], paidOut: [], refunded: [] });
    expectError(await app.call("GET", "/v1/balance", { key: null }), 401, "api_key_missing");
  });
});

describe("livemode and merchants", () => {
  it("a test key lists only its test rows, the live key only its live rows, in JSON and in CSV", async () => {
    expect(new Set(all.map((r) => r.chargeId))).toEqual(new Set([ids.a, ids.b, ids.c]));
    expect(all.every((r) => r.livemode === false)).toBe(true);
    const live = await list("", app.liveKey);
    expect(live.data.map((r) => [r.chargeId, r.type, r.amount, r.livemode, r.chainId])).toEqual([[ids.live, "payment", "7.00", true, BASE]]);
    expect((await list(`?chargeId=${ids.live}`)).data).toEqual([]);
    expect((await list(`?chargeId=${ids.a}`, app.liveKey)).data).toEqual([]);
    const liveCsv = await csv("", app.liveKey);
    expect(liveCsv.headers.get("content-disposition")).toBe('attachment; filename="balance_transactions_live.csv"');
    const text = await liveCsv.text();
    expect(text.trim().split("\r\n")).toHaveLength(2);
    expect(text).toContain(ids.live);
    expect(await (await csv("")).text()).not.toContain(ids.live);
    expect(await (await csv("")).text()).not.toContain(ids.other);
  });
});

describe("OpenAPI", () => {
  it("documents the ledger's paths with their response schemas, CSV as another media type", async () => {
    const doc = (await (await fetch(`${app.url}/v1/openapi.json`)).json()) as any;
    const listOp = doc.paths["/v1/balance_transactions"].get;
    expect(listOp.operationId).toBe("listBalanceTransactions");
    const listSchema = listOp.responses["200"].content["application/json"].schema;
    expect(Object.keys(listSchema.properties).sort()).toEqual(["data", "hasMore", "object"]);
    expect(listSchema.properties.data.items).toEqual({ $ref: "#/components/schemas/BalanceTransaction" });
    const item = doc.components.schemas.BalanceTransaction;
    expect(item.required).toEqual(expect.arrayContaining(["id", "object", "livemode", "type", "amount", "chargeId", "chainId", "txHash", "createdAt"]));
    expect(item.properties.amount.type).toBe("string");
    expect(item.properties.type.enum).toEqual(["payment", "fee", "payout", "refund", "reversal"]);
    // The list is JSON alone (a generated client types it as a list); the CSV is an operation of its own.
    expect(Object.keys(listOp.responses["200"].content)).toEqual(["application/json"]);
    expect(listOp.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["limit", "startingAfter", "endingBefore", "chargeId", "refundId", "type", "createdGte", "createdLt"]),
    );
    expect(listOp.parameters.map((p: { name: string }) => p.name)).not.toContain("format");
    const exportOp = doc.paths["/v1/balance_transactions/export.csv"].get;
    expect(exportOp.operationId).toBe("exportBalanceTransactions");
    expect(Object.keys(exportOp.responses["200"].content)).toEqual(["text/csv"]);
    expect(exportOp.responses["200"].content["text/csv"].schema).toEqual({ type: "string" });
    expect(exportOp.parameters.map((p: { name?: string }) => p.name ?? "version")).toEqual([
      "chargeId",
      "refundId",
      "type",
      "createdGte",
      "createdLt",
      "version",
    ]);
    expect(Object.keys(listOp.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "429"]));

    const getOp = doc.paths["/v1/balance_transactions/{id}"].get;
    expect(getOp.operationId).toBe("getBalanceTransaction");
    expect(getOp.responses["200"].content["application/json"].schema).toEqual(listSchema.properties.data.items);
    expect(Object.keys(getOp.responses)).toContain("404");

    const balanceOp = doc.paths["/v1/balance"].get;
    expect(balanceOp.operationId).toBe("getBalance");
    expect(balanceOp.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Balance" });
    const balance = doc.components.schemas.Balance;
    expect(balance.required).toEqual(expect.arrayContaining(["object", "livemode", "held", "onItsWay", "paidOut", "fees", "refunded"]));
    expect(balance.properties.held.items.properties.amount.type).toBe("string");
  });
});
