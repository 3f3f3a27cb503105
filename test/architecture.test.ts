// The layers of src/ only point down (README "Architecture"), and only the domain writes the charge
// side: read from the sources, imports with the TypeScript compiler's own scanner. A folder is a
// unit; a file at the top of src/ (app.ts, config.ts, main.ts…) is a unit of its own.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");
/** Folders below everything else: they may import only each other's lower floors and packages. */
const LOWER: Record<string, string[]> = { lib: [], db: ["generated"], chain: [], webhooks: [] };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sourceFiles(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** The unit a file of src/ belongs to: its top folder, or the file itself at the top. */
function unitOf(file: string): string {
  const [first, ...rest] = relative(SRC, file).split("/");
  return rest.length === 0 ? first!.replace(/\.ts$/, "") : first!;
}

/** Every import between units: [from unit, to unit, "file -> file"]. */
function unitImports(): [string, string, string][] {
  const edges: [string, string, string][] = [];
  for (const file of sourceFiles(SRC)) {
    for (const { fileName } of ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = resolve(dirname(file), fileName.replace(/\.js$/, ".ts"));
      const [from, to] = [unitOf(file), unitOf(target)];
      if (from !== to) edges.push([from, to, `${relative(SRC, file)} -> ${relative(SRC, target)}`]);
    }
  }
  return edges;
}

it("no two units of src/ import each other", () => {
  const edges = unitImports();
  const seen = new Set(edges.map(([a, b]) => `${a}>${b}`));
  const pairs = edges.filter(([a, b]) => seen.has(`${b}>${a}`)).map(([, , where]) => where);
  expect(pairs).toEqual([]);
});

it("lib/, db/, chain/ and webhooks/ import nothing above them", () => {
  const upward = unitImports()
    .filter(([from, to]) => from in LOWER && !LOWER[from]!.includes(to))
    .map(([, , where]) => where);
  expect(upward).toEqual([]);
});

it("reads the imports it judges (the scanner sees this file's own)", () => {
  const own = ts.preProcessFile(readFileSync(import.meta.filename, "utf8"), true, true).importedFiles.map((f) => f.fileName);
  expect(own).toEqual(expect.arrayContaining(["node:fs", "typescript", "vitest"]));
  expect(unitImports().length).toBeGreaterThan(50);
});

/** A write to a charge-side table: Prisma's write methods, or SQL that changes those tables. */
const CHARGE_SIDE_WRITE =
  /\.(charge|payment|settlement|cloneDeployment)\.(create|createMany|update|updateMany|upsert|delete|deleteMany)\(|\b(UPDATE|INSERT INTO|DELETE FROM)\s+"?(charges|payments|settlements|clone_deployments)\b/;

it("only domain/ writes charges, payments, settlements and clone deployments: the state machine has one owner", () => {
  const writers = sourceFiles(SRC)
    .filter((file) => unitOf(file) !== "domain")
    .flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (CHARGE_SIDE_WRITE.test(line) ? [`${relative(SRC, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
  expect(writers).toEqual([]);
  // The pattern finds what it looks for.
  expect(CHARGE_SIDE_WRITE.test("await tx.payment.createMany({ data })")).toBe(true);
  expect(CHARGE_SIDE_WRITE.test("UPDATE charges SET status = 'EXPIRED'")).toBe(true);
  expect(CHARGE_SIDE_WRITE.test("await tx.payment.findMany({ where })")).toBe(false);
});
