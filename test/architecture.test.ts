// The house .docs/architecture.md describes, measured from the sources: imports only
// go down a floor, no files import each other in a circle, only domain/ writes money, authorization
// and the loops' records, no hand-written function is too long to read. Each rule is also shown to
// fail on a planted violation, so a checker that silently stops finding things fails here too.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  closedWorldViolations,
  fileCircles,
  floorViolations,
  importGraph,
  isGenerated,
  longFunctions,
  prismaTables,
  readSources,
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
 * GraphQL types are generated next to it, in graphql-env.d.ts) shares no module with the server,
 * and the SDK, published as a package of its own, takes only the types generated from the OpenAPI
 * document along (.config/tsconfig.sdk.json).
 */
const CLOSED_WORLDS: Record<string, string[]> = {
  "dashboard/web/": ["dashboard/web/"],
  "sdk/": ["sdk/", "generated/openapi.ts"],
};

/** The longest a hand-written function may be. */
const MAX_FUNCTION_LINES = 120;

/**
 * The records only domain/ may write: money (charges and their clones, the transfers that pay them,
 * the ledger, refunds, invoices and their numbers), gasless authorizations, whose state machines live
 * there, and what the loops of jobs/ keep: the chain's clock (chain cursors, whose confirmed time
 * expires charges, and the block hashes a reorg is found by), the relayer's transactions and the
 * sweeps they send, and the workers' membership. The loops read and call the domain.
 */
const GUARDED_MODELS = [
  "Charge",
  "Clone",
  "ChainTransfer",
  "BalanceTransaction",
  "Refund",
  "Authorization",
  "Invoice",
  "InvoiceNumber",
  "ChainCursor",
  "ChainBlock",
  "RelayerTransaction",
  "Sweep",
  "Worker",
];

const sources = readSources(SRC);
const graph = importGraph(sources);
const tables = prismaTables(readFileSync(resolve(SRC, "../prisma/schema.prisma"), "utf8"));
const guarded = tables.filter((t) => GUARDED_MODELS.includes(t.model));

/** In-memory sources for a planted violation. */
const planted = (files: Record<string, string>): Sources => new Map(Object.entries(files));

describe("floors", () => {
  it("every import goes down a floor or stays in its unit; doors never import each other", () => {
    expect(floorViolations(graph, FLOORS)).toEqual([]);
  });

  it("the browser's dashboard and the SDK import nothing outside their own world", () => {
    expect(closedWorldViolations(graph, CLOSED_WORLDS)).toEqual([]);
  });

  it("reads the imports it judges, .tsx files included", () => {
    expect(graph.length).toBeGreaterThan(300);
    expect(graph.some(({ from }) => from.endsWith(".tsx"))).toBe(true);
    expect(Object.keys(FLOORS)).toEqual(expect.arrayContaining([...new Set([...sources.keys()].map((p) => p.split("/")[0]!.replace(/\.tsx?$/, "")))]));
  });

  it("refuses an import up, sideways between doors, and a unit without a floor", () => {
    const edges = importGraph(
      planted({
        "rest/x.ts": 'import { page } from "../pay/y.js";',
        "pay/y.ts": 'import type { Prisma } from "../db/client.js";\nexport const page = 1;',
        "db/client.ts": 'import { x } from "../rest/x.js";',
        "domain/z.ts": 'import { q } from "../newfolder/q.js";',
      }),
    );
    expect(floorViolations(edges, FLOORS)).toEqual([
      `rest/x.ts -> pay/y.ts: sideways (rest ${FLOORS.rest} -> pay ${FLOORS.pay})`,
      `db/client.ts -> rest/x.ts: up (db ${FLOORS.db} -> rest ${FLOORS.rest})`,
      "domain/z.ts -> newfolder/q.ts: newfolder has no floor",
    ]);
  });

  it("refuses the browser's code leaving dashboard/web, the server entering it, and the SDK importing the server", () => {
    const edges = importGraph(
      planted({
        "dashboard/web/pages/a.tsx": 'import { x } from "../../../domain/money.js";\nimport { y } from "../client.js";',
        "dashboard/web/client.ts": "",
        "dashboard/routes.ts": 'import { y } from "./web/client.js";',
        "sdk/index.ts": 'import type { paths } from "../generated/openapi.js";\nimport { AppError } from "../domain/errors.js";',
      }),
    );
    expect(closedWorldViolations(edges, CLOSED_WORLDS)).toEqual([
      "dashboard/web/pages/a.tsx -> domain/money.ts: leaves dashboard/web/",
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
  it("knows every guarded model by its delegate and its SQL name", () => {
    expect(guarded.map((t) => t.model).sort()).toEqual([...GUARDED_MODELS].sort());
    expect(guarded).toContainEqual({ model: "BalanceTransaction", delegate: "balanceTransaction", sql: "balance_transactions" });
  });

  it("only domain/ writes money, authorization, chain cursor, relayer and sweep records: their state machines have one owner", () => {
    const writers = [...sources]
      .filter(([path]) => !path.startsWith("domain/") && !isGenerated(path))
      .flatMap(([path, text]) => tableWrites(path, text, guarded));
    expect(writers).toEqual([]);
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
      "await tx.webhookDelivery.update({ where, data }); // not a guarded table",
    ].join("\n");
    expect(tableWrites("jobs/x.ts", text, guarded)).toEqual([
      "jobs/x.ts:2: authorization.updateManyAndReturn",
      "jobs/x.ts:3: charge.createManyAndReturn",
      "jobs/x.ts:4: invoiceNumber.upsert",
      "jobs/x.ts:5: update charges",
      'jobs/x.ts:7: Insert Into "refunds"',
      "jobs/x.ts:8: DELETE FROM public.balance_transactions",
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
});
