// The standard introspection query works (codegen, graphql-inspector and IDEs read the schema from
// /graphql) while depth stays limited: operations by graphql-armor's limit, introspection by its own.
import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery, lexicographicSortSchema, printSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_INTROSPECTION_DEPTH } from "../../src/graphql/introspection.js";
import { printedSchema } from "../../src/graphql/schema.js";
import { QUERY_LIMITS } from "../../src/graphql/yoga.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const post = (query: string, key: string | null = app.testKey) => app.call("POST", "/graphql", { key, body: { query } });
/** `{ __schema { types { fields { type { ofType { … name } } } } } }`: four fields, `ofTypes` more, and name. */
const schemaDepth = (ofTypes: number) => `{ __schema { types { fields { type { ${"ofType { ".repeat(ofTypes)}name${" }".repeat(ofTypes)} } } } } }`;

describe("the standard introspection query", () => {
  it.each([
    ["getIntrospectionQuery()", getIntrospectionQuery()],
    [
      "getIntrospectionQuery() with every option",
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      }),
    ],
  ])("%s returns the schema that schema.graphql prints", async (_what, query) => {
    for (const key of [app.testKey, null]) {
      const res = await post(query, key);
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      expect(res.body.errors).toBeUndefined();
      const served = buildClientSchema(res.body.data as IntrospectionQuery);
      expect(`${printSchema(lexicographicSortSchema(served))}\n`).toBe(printedSchema());
    }
  });
});

describe("depth", () => {
  it(`lets introspection nest ${MAX_INTROSPECTION_DEPTH} fields deep, deeper than operations may`, async () => {
    expect(MAX_INTROSPECTION_DEPTH).toBeGreaterThan(QUERY_LIMITS.maxDepth);
    const res = await post(schemaDepth(MAX_INTROSPECTION_DEPTH - 5));
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
  });

  it.each([
    ["one level too deep", MAX_INTROSPECTION_DEPTH - 4],
    ["six hundred ofType deep (as deep as the token limit lets a document go)", 600],
  ])("refuses introspection %s, naming the query", async (_what, ofTypes) => {
    const res = await post(schemaDepth(ofTypes));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        message: `Introspection depth limit of ${MAX_INTROSPECTION_DEPTH} exceeded, found ${ofTypes + 5}.`,
        extensions: { code: "parameter_invalid", param: "query", statusCode: 400 },
      }),
    ]);
  });

  it("counts fragments as the fields they hold", async () => {
    const fragments = Array.from({ length: 25 }, (_, i) => `fragment F${i} on __Type { ofType { ${i < 24 ? `...F${i + 1}` : "name"} } }`).join(" ");
    const res = await post(`{ __schema { types { ...F0 } } } ${fragments}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/^Introspection depth limit/);
  });

  it("still limits __type and every other operation", async () => {
    const deepType = await post(
      `{ __type(name: "Charge") { fields { type { ${"ofType { ".repeat(QUERY_LIMITS.maxDepth)}name${" }".repeat(QUERY_LIMITS.maxDepth)} } } } }`,
    );
    // Charge.customer and Customer.charges nest without end: four levels a round.
    const round = (n: number): string => (n === 0 ? "id" : `customer { charges(first: 1) { edges { node { ${round(n - 1)} } } } }`);
    const deepCharge = await post(`{ charges(first: 1) { edges { node { ${round(4)} } } } }`);
    for (const res of [deepType, deepCharge]) {
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(/Query depth limit of 15 exceeded/),
          extensions: { code: "parameter_invalid", param: "query", statusCode: 400 },
        }),
      ]);
    }
  });
});
