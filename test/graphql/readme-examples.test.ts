// The README and the guides in .docs/ stay true: their GraphQL documents (```graphql blocks and the
// graphql(`…`) operations of their TypeScript examples) are valid against the served schema, the README
// stays short enough for a newcomer, and every relative link leads to a file of the repository.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse, validate } from "graphql";
import { describe, expect, it } from "vitest";
import { schema } from "../../src/graphql/schema.js";

const pages = [
  "README.md",
  ...readdirSync(".docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(".docs", f)),
];
const texts = new Map(pages.map((page) => [page, readFileSync(page, "utf8")]));

const documents = [...texts].flatMap(([page, text]) =>
  [...text.matchAll(/```graphql\n([\s\S]*?)```/g), ...text.matchAll(/graphql\(`([\s\S]*?)`\)/g)].map(
    (m) => [`${page}: ${m[1]!.trim().split("\n")[0]!}`, m[1]!] as const,
  ),
);

it("finds the GraphQL examples of the README and the guides", () => {
  expect(documents.filter(([name]) => name.startsWith("README.md")).length).toBeGreaterThanOrEqual(2);
  expect(documents.length).toBeGreaterThanOrEqual(6);
});

it.each(documents)("%s … is valid against the schema", (_name, document) => {
  expect(validate(schema, parse(document)).map((e) => e.message)).toEqual([]);
});

it("keeps the README at most 400 lines", () => {
  expect(texts.get("README.md")!.split("\n").length).toBeLessThanOrEqual(400);
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown page's headings (shell comments inside code blocks are no headings). */
function anchorsOf(text: string): Set<string> {
  const prose = text.replace(/```[\s\S]*?```/g, "");
  return new Set([...prose.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

describe("relative links", () => {
  it.each(pages)("%s links only to files and headings that exist", (page) => {
    // Code blocks hold shell and JSON, not links.
    const prose = texts.get(page)!.replace(/```[\s\S]*?```/g, "");
    const broken = [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((link) => !/^[a-z]+:/i.test(link))
      .filter((link) => {
        const [file, anchor] = link.split("#") as [string, string | undefined];
        const target = file === "" ? page : join(dirname(page), file);
        if (!existsSync(target)) return true;
        return anchor !== undefined && target.endsWith(".md") && !anchorsOf(readFileSync(target, "utf8")).has(anchor);
      });
    expect(broken).toEqual([]);
  });
});
