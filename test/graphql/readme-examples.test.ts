// The README's GraphQL documents (```graphql blocks and the graphql(`…`) operations of its
// TypeScript examples) are valid against the served schema: an example that no longer runs fails here.
import { readFileSync } from "node:fs";
import { parse, validate } from "graphql";
import { expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.js";

const readme = readFileSync("README.md", "utf8");
const documents = [
  ...[...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!),
  ...[...readme.matchAll(/graphql\(`([\s\S]*?)`\)/g)].map((m) => m[1]!),
];

it("finds the README's GraphQL examples", () => {
  expect(documents.length).toBeGreaterThanOrEqual(4);
});

it.each(documents.map((d) => [d.trim().split("\n")[0]!, d]))("%s … is valid against the schema", (_first, document) => {
  expect(validate(schema, parse(document)).map((e) => e.message)).toEqual([]);
});
