// The house .docs/architecture.md describes, measured from the sources: imports only
// go down a floor, no files import each other in a circle, only domain/ writes money, authorization
// and the loops' records, no hand-written function is too long to read. Each rule is also shown to
// fail on a planted violation, so a checker that silently stops finding things fails here too.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import {
  closedWorldViolations,
  environmentReads,
  fileCircles,
  floorViolations,
  importGraph,
  importRefusals,
  importsOf,
  isGenerated,
  longFunctions,
  type PackageJson,
  PRISMA_READS,
  PRISMA_WRITES,
  prismaTables,
  readSources,
  type Served,
  type Sources,
  tableWrites,
} from "./helpers/architecture.js";

const SRC = resolve(import.meta.dirname, "../src");

/**
 * The floor of each unit of src/ (a folder, or a file at its top). An import may only go to a lower
 * floor or stay in its own unit. From the import graph as it is meant to be:
 * 0 generated code and lib/ import nothing of ours; 1 db/, chain/, webhooks/ and email/ are the machinery
 * the domain drives; 2 domain/ holds every rule; 3 config.ts reads the environment into domain and
 * chain settings; 4 realtime/ (live updates) and jobs/ (the loops) run the domain, instance.ts says where
 * the running service answers (from the settings); 5 http/ is the
 * web plumbing every door shares (server, errors, limits, metrics over realtime, the session cookie,
 * security headers); 6 services.ts, the one composition root (buildServices) every process, the CLI
 * included, starts from; 7 the doors, which never import each other; 8 what assembles them (app, the
 * demo seed, process lifetime); 9 the entry points.
 */
const FLOORS: Record<string, number> = {
  generated: 0,
  lib: 0,
  db: 1,
  chain: 1,
  webhooks: 1,
  email: 1,
  domain: 2,
  config: 3,
  realtime: 4,
  jobs: 4,
  instance: 4,
  http: 5,
  services: 6,
  rest: 7,
  graphql: 7,
  pay: 7,
  dashboard: 7,
  // The dashboard's browser code, a unit of its own (unitOf): a door's, importing only lib/money.js from outside.
  "dashboard/web": 7,
  cli: 7,
  sdk: 7,
  app: 8,
  demo: 8,
  process: 8,
  main: 9,
  worker: 9,
};

/**
 * Units that live in a world of their own: the browser's dashboard (bundled for the browser; its
 * GraphQL types are generated next to it, in graphql-env.d.ts) shares one module with the server,
 * the money module lib/money.js (plain JavaScript importing nothing, so that the domain, the
 * dashboard and the hosted pages parse and print amounts alike), and the SDK, published as a package
 * of its own, takes only the types generated from the OpenAPI document along (.config/tsconfig.sdk.json).
 */
const CLOSED_WORLDS: Record<string, string[]> = {
  "dashboard/web/": ["dashboard/web/", "lib/money."],
  "sdk/": ["sdk/", "generated/openapi.ts"],
};

/** The longest a hand-written function may be. */
const MAX_FUNCTION_LINES = 120;

/**
 * Every model of prisma/schema.prisma is written by domain/ alone: money (charges, clones, transfers,
 * the ledger, refunds, invoices), the state machines around it (authorizations, subscriptions,
 * emails, webhook deliveries), what the loops of jobs/ keep (the chain's clock and block hashes, the
 * reorg re-checks, the relayer's transactions, sweeps, the workers' membership) and what the doors
 * claim (idempotency records, sessions). The loops and doors read and call the domain.
 */

/** The packages whose files live in src/: the repository's own (`stablegate`) and the SDK's (`@stablegate/sdk`). */
const packageAt = (dir: string): PackageJson => {
  const { name, exports, imports } = JSON.parse(readFileSync(resolve(SRC, dir, "package.json"), "utf8")) as Omit<PackageJson, "dir">;
  return { dir, name, exports, imports };
};
const PACKAGES = [packageAt(".."), packageAt("sdk")];
/** The hosted pages import the money module and the EIP-3009 typed data as siblings; pay/asset-routes.ts serves them from lib/. */
const SERVED: Served = { "pay/assets/money.js": "lib/money.js", "pay/assets/eip3009.js": "lib/eip3009.js" };

const sources = readSources(SRC);
const graph = importGraph(sources, PACKAGES, SERVED);
const tables = prismaTables(readFileSync(resolve(SRC, "../prisma/schema.prisma"), "utf8"));
const guarded = tables;

/** In-memory sources for a planted violation. */
const planted = (files: Record<string, string>): Sources => new Map(Object.entries(files));

describe("floors", () => {
  it("every import goes down a floor or stays in its unit; doors never import each other", () => {
    expect(floorViolations(graph, FLOORS)).toEqual([]);
  });

  it("the browser's dashboard and the SDK import nothing outside their own world", () => {
    expect(closedWorldViolations(graph, CLOSED_WORLDS)).toEqual([]);
  });

  it("no import names what it loads by a computed specifier, an absolute path, or a name that is no source", () => {
    expect(importRefusals(sources, PACKAGES, SERVED)).toEqual([]);
  });

  it("the money module and the EIP-3009 typed data import nothing; the SDK imports no package but Node's own", () => {
    const packagesOf = (path: string) => importsOf(path, sources.get(path)!).filter((s) => s === null || !(s.startsWith(".") || s.startsWith("node:")));
    expect(["lib/money.js", "lib/eip3009.js"].flatMap((path) => importsOf(path, sources.get(path)!))).toEqual([]);
    const sdk = [...sources.keys()].filter((path) => path.startsWith("sdk/") && path !== "sdk/build.mjs");
    expect(sdk.length).toBeGreaterThan(1);
    expect(sdk.flatMap(packagesOf)).toEqual([]);
    expect(importsOf("lib/money.js", 'import { x } from "./periodic.js";\nexport const y = await import("zod");')).toEqual(["./periodic.js", "zod"]);
  });

  it("the guide's picture of the floors is this table", () => {
    const guide = readFileSync(resolve(SRC, "../.docs/architecture.md"), "utf8");
    const picture = guide.slice(guide.indexOf("```\n") + 4, guide.indexOf("\n```", guide.indexOf("```\n") + 4)).split("\n");
    const drawn: Record<string, number> = {};
    let floor = -1;
    for (const line of picture) {
      // The left column: a floor's number on its first line, then its units ("rest/", "main.ts").
      const [, number, units] = /^\s*(\d+)?\s+(\S.*?)?(?:\s{2,}|$)/.exec(line.slice(0, 40)) ?? [];
      if (number !== undefined) floor = Number(number);
      for (const unit of units?.split(" ") ?? []) drawn[unit.replace(/\/$|\.ts$/, "")] = floor;
    }
    const { "dashboard/web": _, ...units } = FLOORS;
    expect(drawn).toEqual(units);
  });

  it("reads the imports it judges, .tsx and .js files included", () => {
    expect(graph.length).toBeGreaterThan(300);
    expect(graph.some(({ from }) => from.endsWith(".tsx"))).toBe(true);
    expect(graph).toContainEqual({ from: "pay/assets/pay.js", to: "pay/assets/wallets.js" });
    expect(graph).toContainEqual({ from: "pay/assets/pay.js", to: "lib/money.js" });
    expect([...sources.keys()]).toEqual(expect.arrayContaining(["sdk/build.mjs"]));
    expect(Object.keys(FLOORS)).toEqual(expect.arrayContaining([...new Set([...sources.keys()].map((p) => p.split("/")[0]!.replace(/\.tsx?$/, "")))]));
  });

  it("refuses an import up, sideways between doors, and a unit without a floor", () => {
    const edges = importGraph(
      planted({
        "rest/x.ts": 'import { page } from "../pay/y.js";',
        "pay/y.ts": 'import type { Prisma } from "../db/client.js";\nexport const page = 1;',
        "db/client.ts": 'import { x } from "../rest/x.js";',
        "domain/z.ts": 'import { q } from "../newfolder/q.js";',
        "newfolder/q.ts": "export const q = 1;",
      }),
    );
    expect(floorViolations(edges, FLOORS)).toEqual([
      `rest/x.ts -> pay/y.ts: sideways (rest ${FLOORS.rest} -> pay ${FLOORS.pay})`,
      `db/client.ts -> rest/x.ts: up (db ${FLOORS.db} -> rest ${FLOORS.rest})`,
      "domain/z.ts -> newfolder/q.ts: newfolder has no floor",
    ]);
  });

  it("refuses a door imported from below however the import is written", () => {
    const withSubpaths = [{ ...PACKAGES[0]!, imports: { "#doors/*": "./src/rest/*" } }, PACKAGES[1]!];
    const edges = importGraph(
      planted({
        "rest/x.ts": "export const x = 1;",
        "graphql/y.ts": "export const y = 1;",
        "sdk/index.ts": "export class Client {}",
        "domain/relative.ts": 'import { x } from "../rest/x.js";',
        "domain/type.ts": 'type X = typeof import("../rest/x.js");\nexport type { Y } from "../graphql/y.js";',
        "domain/dynamic.ts": 'const { x } = await import("../rest/x.js");',
        "domain/self.ts": 'import { x } from "stablegate/src/rest/x.js";\nimport { y } from "stablegate/dist/graphql/y.js";',
        "domain/subpath.ts": 'import { x } from "#doors/x.js";',
        "jobs/sdk.ts": 'import { Client } from "stablegate/sdk";',
        "db/require.cjs": 'const { x } = require("../rest/x.js");',
        "lib/equals.ts": 'import x = require("../rest/x.js");',
        "chain/loader.ts": [
          'import { createRequire } from "node:module";',
          "const load = createRequire(import.meta.url);",
          'load("../rest/x.js");',
          'createRequire(import.meta.url)("../graphql/y.js");',
        ].join("\n"),
        "pay/assets/a.js": 'import { y } from "../../graphql/y.js";',
      }),
      withSubpaths,
    );
    expect(floorViolations(edges, FLOORS)).toEqual([
      "domain/relative.ts -> rest/x.ts: up (domain 2 -> rest 7)",
      "domain/type.ts -> rest/x.ts: up (domain 2 -> rest 7)",
      "domain/type.ts -> graphql/y.ts: up (domain 2 -> graphql 7)",
      "domain/dynamic.ts -> rest/x.ts: up (domain 2 -> rest 7)",
      "domain/self.ts -> rest/x.ts: up (domain 2 -> rest 7)",
      "domain/self.ts -> graphql/y.ts: up (domain 2 -> graphql 7)",
      "domain/subpath.ts -> rest/x.ts: up (domain 2 -> rest 7)",
      "jobs/sdk.ts -> sdk/index.ts: up (jobs 4 -> sdk 7)",
      "db/require.cjs -> rest/x.ts: up (db 1 -> rest 7)",
      "lib/equals.ts -> rest/x.ts: up (lib 0 -> rest 7)",
      "chain/loader.ts -> rest/x.ts: up (chain 1 -> rest 7)",
      "chain/loader.ts -> graphql/y.ts: up (chain 1 -> graphql 7)",
      "pay/assets/a.js -> graphql/y.ts: sideways (pay 7 -> graphql 7)",
    ]);
  });

  it("refuses outright an import whose specifier is computed, absolute, or names nothing it can follow", () => {
    const files = planted({
      "rest/x.ts": "export const x = 1;",
      "domain/computed.ts": ['const door = "rest";', "await import(`../${door}/x.js`);", 'await import("../rest/" + "x.js");'].join("\n"),
      "pay/assets/a.js": "const m = await import(location.href);\nrequire(name);",
      "chain/artifacts.ts": 'import { createRequire } from "node:module";\ncreateRequire(import.meta.url)(`${DIR}/x.json`);',
      "domain/absolute.ts": 'import "/work/src/rest/x.js";\nimport "file:///work/src/rest/x.js";',
      "domain/names.ts": 'import "#rest/x.js";\nimport "stablegate/rest/nowhere.js";\nimport "node:fs";\nimport "ethers";',
      "pay/assets/b.js":
        'import { formatUnits } from "./money.js";\nimport { gone } from "./gone.js";\nimport artifacts from "../../chain/contracts/artifacts.json";',
      "lib/money.js": "",
    });
    expect(importRefusals(files, PACKAGES, SERVED)).toEqual([
      "domain/computed.ts:2: import() of a computed specifier",
      "domain/computed.ts:3: import() of a computed specifier",
      "pay/assets/a.js:1: import() of a computed specifier",
      "pay/assets/a.js:2: require() of a computed specifier",
      "chain/artifacts.ts:2: require() of a computed specifier",
      'domain/absolute.ts:1: import of "/work/src/rest/x.js", an absolute path or URL',
      'domain/absolute.ts:2: import of "file:///work/src/rest/x.js", an absolute path or URL',
      'domain/names.ts:1: import of "#rest/x.js", a subpath import no package maps',
      'domain/names.ts:2: import of "stablegate/rest/nowhere.js", the package\'s own name for no source',
      'pay/assets/b.js:2: import of "./gone.js", a relative path to no source',
    ]);
  });

  it("refuses the browser's code leaving dashboard/web (but for the money module), the server entering it, and the SDK importing the server", () => {
    const edges = importGraph(
      planted({
        "dashboard/web/pages/a.tsx": 'import { x } from "../../../domain/money.js";\nimport { y } from "../client.js";',
        "dashboard/web/client.ts": "",
        "dashboard/web/pages/b.tsx": 'import { formatUnits } from "../../../lib/money.js";\nimport { Periodic } from "../../../lib/periodic.js";',
        "dashboard/routes.ts": 'import { y } from "./web/client.js";',
        "sdk/index.ts": 'import type { paths } from "../generated/openapi.js";\nimport { AppError } from "../domain/errors.js";',
        "domain/money.ts": "",
        "lib/money.js": "",
        "lib/periodic.ts": "",
        "generated/openapi.ts": "",
        "domain/errors.ts": "",
      }),
    );
    expect(closedWorldViolations(edges, CLOSED_WORLDS)).toEqual([
      "dashboard/web/pages/a.tsx -> domain/money.ts: leaves dashboard/web/",
      "dashboard/web/pages/b.tsx -> lib/periodic.ts: leaves dashboard/web/",
      "dashboard/routes.ts -> dashboard/web/client.ts: enters dashboard/web/",
      "sdk/index.ts -> domain/errors.ts: leaves sdk/",
    ]);
  });
});

describe("circles", () => {
  it("no hand-written files of src/ import each other in a circle, of any length", () => {
    expect(fileCircles(graph.filter(({ from }) => !isGenerated(from)))).toEqual([]);
  });

  it("finds a circle of three files, and a file importing itself", () => {
    const edges = importGraph(
      planted({
        "graphql/a.ts": 'import { b } from "./b.js";',
        "graphql/b.ts": 'import { c } from "./c.js";',
        "graphql/c.ts": 'import type { a } from "./a.js";',
        "graphql/d.ts": 'import { a } from "./a.js";\nexport * from "./d.js";',
      }),
    );
    expect(fileCircles(edges)).toEqual([["graphql/a.ts", "graphql/b.ts", "graphql/c.ts"], ["graphql/d.ts"]]);
  });
});

describe("writes", () => {
  it("knows every method of a Prisma delegate as a read or a write", () => {
    const file = ts.createSourceFile("Charge.ts", readFileSync(resolve(SRC, "generated/prisma/models/Charge.ts"), "utf8"), ts.ScriptTarget.Latest);
    const delegate = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === "ChargeDelegate");
    const methods = delegate!.members.flatMap((m) => (ts.isMethodSignature(m) && ts.isIdentifier(m.name) ? [m.name.text] : []));
    expect(methods).toEqual(expect.arrayContaining(["findMany", "update", "createManyAndReturn"]));
    expect(methods.filter((m) => !PRISMA_READS.has(m) && !PRISMA_WRITES.test(m))).toEqual([]);
  });

  it("knows every model by its delegate and its SQL name", () => {
    expect(guarded.length).toBeGreaterThan(35);
    expect(guarded).toContainEqual({ model: "ReorgRecheck", delegate: "reorgRecheck", sql: "reorg_rechecks" });
    expect(guarded).toContainEqual({ model: "BalanceTransaction", delegate: "balanceTransaction", sql: "balance_transactions" });
  });

  it("only domain/ writes any table: every state machine has one owner", () => {
    const writers = [...sources]
      .filter(([path]) => !path.startsWith("domain/") && !isGenerated(path))
      .flatMap(([path, text]) => tableWrites(path, text, guarded));
    expect(writers).toEqual([]);
  });

  it("finds a door writing idempotency records itself, by delegate or SQL", () => {
    const text = [
      "await this.prisma.idempotencyRecord.createMany({ data, skipDuplicates: true });",
      "await prisma.idempotencyRecord.findUnique({ where });",
      "await prisma.$executeRaw`DELETE FROM idempotency_records WHERE created_at < ${cutoff}`;",
    ].join("\n");
    expect(tableWrites("rest/idempotency.ts", text, guarded)).toEqual([
      "rest/idempotency.ts:1: idempotencyRecord.createMany",
      "rest/idempotency.ts:3: DELETE FROM idempotency_records",
    ]);
  });

  it("finds writes by any Prisma method but a read, and SQL in any case, over any lines", () => {
    const text = [
      "await tx.refund.findMany({ where });",
      "await tx.authorization.updateManyAndReturn({ where, data });",
      "await prisma.charge.createManyAndReturn({ data });",
      "await tx.invoiceNumber.upsert({ where, create, update });",
      "await tx.$executeRaw`update charges",
      "  set status = ${status} where id = ${id}`;",
      'await tx.$queryRawUnsafe("Insert Into \\"refunds\\" (id) values ($1)", id);',
      "const sql = Prisma.sql`DELETE FROM public.balance_transactions WHERE id = ${id}`;",
      "// update charges set status = 'PAID' (a comment is no write)",
      'const words = "update the webhook endpoints";',
      "await tx.webhookDelivery.update({ where, data });",
      "const { email, event } = body;",
      "const address = email.trim().toLowerCase(); // a string named like a model is no delegate",
      "await event.create({ data }); // but Prisma's own writing method through that name still counts",
    ].join("\n");
    expect(tableWrites("jobs/x.ts", text, guarded)).toEqual([
      "jobs/x.ts:2: authorization.updateManyAndReturn",
      "jobs/x.ts:3: charge.createManyAndReturn",
      "jobs/x.ts:4: invoiceNumber.upsert",
      "jobs/x.ts:11: webhookDelivery.update",
      "jobs/x.ts:14: event.create",
      "jobs/x.ts:5: update charges",
      'jobs/x.ts:7: Insert Into "refunds"',
      "jobs/x.ts:8: DELETE FROM public.balance_transactions",
    ]);
  });

  it("finds a Prisma write however the delegate is reached: a name, a destructuring, an element, a static block", () => {
    const text = [
      "const { charge } = prisma;",
      "await charge.update({ where, data });",
      "const c = tx.charge;",
      "await c.updateMany({ where, data });",
      'await tx["refund"].create({ data });',
      "await tx.authorization['delete']({ where });",
      "const { invoice: bill } = tx;",
      "const again = bill;",
      "await again.upsert({ where, create, update });",
      "await prisma.$transaction(async ({ clone }) => clone.deleteMany({}));",
      "const write = tx.chainTransfer.create;",
      "const { update } = tx.balanceTransaction;",
      "await tx.charge[method]({ where });",
      "await tx[model].update({ where, data });",
      "class Job { static { void tx.refund.create({ data }); } }",
      "let d; d = tx.invoiceNumber; await d.update({ where, data });",
      "await tx.charge.findMany({ where }); const { charge: paid } = result; paid.id;",
    ].join("\n");
    expect(tableWrites("jobs/x.ts", text, guarded)).toEqual([
      "jobs/x.ts:2: charge.update",
      "jobs/x.ts:4: charge.updateMany",
      "jobs/x.ts:5: refund.create",
      "jobs/x.ts:6: authorization.delete",
      "jobs/x.ts:9: invoice.upsert",
      "jobs/x.ts:10: clone.deleteMany",
      "jobs/x.ts:11: chainTransfer.create",
      "jobs/x.ts:12: balanceTransaction.update",
      "jobs/x.ts:13: charge[?]",
      "jobs/x.ts:14: [?].update",
      "jobs/x.ts:15: refund.create",
      "jobs/x.ts:16: invoiceNumber.update",
    ]);
  });

  it("finds SQL split across literals, joined, templated, behind ONLY, quoted or schema-qualified", () => {
    const text = [
      'await tx.$executeRawUnsafe("UPDATE " + "charges SET status = $1", s);',
      "await tx.$executeRaw`UPDATE ONLY charges SET status = ${s}`;",
      'await tx.$executeRawUnsafe(\'DELETE FROM ONLY "public"."refunds" WHERE id = $1\', id);',
      'const table = "clones";',
      "await tx.$executeRaw(Prisma.sql`INSERT INTO ${Prisma.raw(table)} (id) VALUES (${id})`);",
      'const parts = ["update", "stablegate.invoices", "set x = 1"];',
      'await tx.$executeRawUnsafe(parts.join(" "));',
      'await tx.$executeRawUnsafe(`UPD${"ATE"} /* x */ authorizations SET x = 1`);',
      'let q = "MERGE INTO ";',
      'q += "chain_transfers t USING x ON true WHEN MATCHED THEN DELETE";',
      "await tx.$executeRawUnsafe(`UPDATE ${name} SET x = 1 WHERE id = $1`, id);",
      'await tx.$executeRawUnsafe("TRUNCATE TABLE balance_transactions");',
      "const note = `update ${thing} soon`;",
      "await tx.$executeRaw`UPDATE webhook_deliveries SET x = 1`;",
      'await tx.$queryRawUnsafe("SELECT * FROM charges FOR UPDATE OF charges");',
      'await tx.$executeRawUnsafe("INSERT INTO invoice_numbers".concat(" (id) VALUES ($1)"), id);',
    ].join("\n");
    expect(tableWrites("jobs/x.ts", text, guarded)).toEqual([
      "jobs/x.ts:1: UPDATE charges",
      "jobs/x.ts:2: UPDATE ONLY charges",
      'jobs/x.ts:3: DELETE FROM ONLY "public"."refunds"',
      "jobs/x.ts:5: INSERT INTO clones",
      "jobs/x.ts:7: update stablegate.invoices",
      "jobs/x.ts:8: UPDATE authorizations",
      "jobs/x.ts:9: MERGE INTO chain_transfers",
      "jobs/x.ts:11: UPDATE ?",
      "jobs/x.ts:12: TRUNCATE TABLE balance_transactions",
      "jobs/x.ts:14: UPDATE webhook_deliveries",
      "jobs/x.ts:16: INSERT INTO invoice_numbers",
    ]);
  });
});

describe("functions", () => {
  it(`no hand-written function is longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const long = [...sources].filter(([path]) => !isGenerated(path)).flatMap(([path, text]) => longFunctions(path, text, MAX_FUNCTION_LINES));
    expect(long).toEqual([]);
  });

  it("measures functions of every kind, .tsx components included", () => {
    const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const text = [`export function long() {`, body(121), `}`, `const Page = () => {`, body(119), `  return <div />;`, `};`].join("\n");
    expect(longFunctions("dashboard/web/pages/p.tsx", text, MAX_FUNCTION_LINES)).toEqual(["dashboard/web/pages/p.tsx:1: long (121 lines)"]);
  });

  it("measures static blocks, methods, accessors and object literals' functions, and .js sources", () => {
    const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `    v${i}();`);
    const lines = ["class Job {", "  static {", ...body(121), "  }", "  get total() {", ...body(121), "  }", "  run() {", ...body(120), "  }", "}"];
    const [block, getter] = [2, 2 + 121];
    const start = lines.length + 1;
    lines.push("const handlers = {", "  save() {", ...body(121), "  },", "  load: function () {", ...body(121), "  },", "};");
    expect(longFunctions("jobs/job.ts", lines.join("\n"), MAX_FUNCTION_LINES)).toEqual([
      `jobs/job.ts:${block}: static {} (121 lines)`,
      `jobs/job.ts:${getter}: get total (121 lines)`,
      `jobs/job.ts:${start + 1}: save (121 lines)`,
      `jobs/job.ts:${start + 1 + 121}: load (121 lines)`,
    ]);
    const script = ["(() => {", ...body(121), "})();"].join("\n");
    expect(longFunctions("pay/assets/page.js", script, MAX_FUNCTION_LINES)).toEqual(["pay/assets/page.js:1: (anonymous) (121 lines)"]);
  });
});

/** The files of src/ that may read process.env, each with its reason. */
const ENVIRONMENT_READERS: Record<string, string> = {
  "config.ts": "the one reader: every setting is read, validated and documented there, and handed on as Config",
};

describe("environment", () => {
  it("only config.ts reads process.env: every setting is validated and documented in one place", () => {
    const readers = [...sources].filter(([path]) => !(path in ENVIRONMENT_READERS)).flatMap(([path, text]) => environmentReads(path, text));
    expect(readers).toEqual([]);
    for (const path of Object.keys(ENVIRONMENT_READERS)) expect(environmentReads(path, sources.get(path)!), path).not.toEqual([]);
  });

  it("finds the environment read however it is written", () => {
    const text = [
      "const key = process.env.X;",
      'const all = process["env"];',
      "const { env } = process;",
      "const { env: e, argv } = globalThis.process;",
      "({ env } = process);",
      'import { env as environment } from "node:process";',
      'import proc from "node:process";',
      "const port = proc.env.PORT;",
      "const p = process;",
      "const q = p.env;",
      "// process.env in a comment is no read",
      'const words = "process.env";',
      "const argv = process.argv; const { exit } = process; const other = config.env;",
      'const g = globalThis["process"].env;',
      'const r = Reflect.get(process, "env");',
      'const { env: d } = await import("node:process");',
      'const m = require("process");',
      "const n = m.env;",
    ].join("\n");
    expect(environmentReads("cli/x.ts", text)).toEqual([
      "cli/x.ts:1: process.env",
      'cli/x.ts:2: process["env"]',
      "cli/x.ts:3: { env } = process",
      "cli/x.ts:4: { env: e, argv } = globalThis.process",
      "cli/x.ts:5: { env } = process",
      'cli/x.ts:6: import { env as environment } from "node:process";',
      "cli/x.ts:8: proc.env",
      "cli/x.ts:10: p.env",
      'cli/x.ts:14: globalThis["process"].env',
      'cli/x.ts:15: Reflect.get(process, "env")',
      'cli/x.ts:16: { env: d } = await import("node:process")',
      "cli/x.ts:18: m.env",
    ]);
  });
});
