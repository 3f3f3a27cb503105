// The checkers behind test/architecture.test.ts, as pure functions over source texts keyed by their
// path inside src/ ("rest/charges.ts"), so that each rule can be shown to fail on a planted
// violation without touching the tree. Imports come from the TypeScript compiler's own scanner,
// writes and function lengths from its syntax tree: comments and prose never count.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, extname, join, normalize, relative } from "node:path";
import ts from "typescript";

/** Source texts by their path relative to src/ ("rest/charges.ts"). */
export type Sources = ReadonlyMap<string, string>;

/** One import between two files of src/, both named by their path relative to src/. */
export interface ImportEdge {
  from: string;
  to: string;
}

/** Every .ts and .tsx file under `root`, by its path relative to it; build output is not a source. */
export function readSources(root: string): Sources {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return e.name === "dist" || e.name === "node_modules" ? [] : walk(path);
      return /\.tsx?$/.test(e.name) ? [path] : [];
    });
  return new Map(walk(root).map((path) => [relative(root, path), readFileSync(path, "utf8")]));
}

/** Whether `path` is written by a generator (src/generated, a .d.ts such as graphql-env.d.ts), not by hand. */
export function isGenerated(path: string): boolean {
  return path.startsWith("generated/") || path.endsWith(".d.ts");
}

/**
 * The unit `path` belongs to: its top folder, or the file itself (without extension) at the top of
 * src/. The browser's code, dashboard/web, is a unit of its own.
 */
export function unitOf(path: string): string {
  if (path.startsWith("dashboard/web/")) return "dashboard/web";
  const [first, ...rest] = path.split("/");
  return rest.length === 0 ? first!.replace(/\.(d\.)?tsx?$/, "") : first!;
}

/** The file of `sources` an import specifier of `from` names (`./x.js` is x.ts, x.tsx or x.d.ts), or its .ts guess. */
function resolveImport(sources: Sources, from: string, specifier: string): string {
  const target = normalize(join(dirname(from), specifier));
  const stem = extname(target) === ".js" ? target.slice(0, -3) : target;
  const candidates = [target, `${stem}.ts`, `${stem}.tsx`, `${stem}.d.ts`, `${stem}/index.ts`];
  return candidates.find((c) => sources.has(c)) ?? `${stem}.ts`;
}

/** Every relative import (type-only, re-exports and dynamic ones included) between files of `sources`. */
export function importGraph(sources: Sources): ImportEdge[] {
  return [...sources].flatMap(([from, text]) =>
    ts
      .preProcessFile(text, true, true)
      .importedFiles.filter(({ fileName }) => fileName.startsWith("."))
      .map(({ fileName }) => ({ from, to: resolveImport(sources, from, fileName) })),
  );
}

/**
 * Imports that do not go down: between units, an import must reach a strictly lower floor (the
 * same floor is sideways, refused too). A unit missing from `floors` is reported, so a new folder
 * needs a place in the table.
 */
export function floorViolations(edges: ImportEdge[], floors: Readonly<Record<string, number>>): string[] {
  return edges.flatMap(({ from, to }) => {
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a === b) return [];
    if (floors[a] === undefined || floors[b] === undefined) return [`${from} -> ${to}: ${floors[a] === undefined ? a : b} has no floor`];
    if (floors[b]! < floors[a]!) return [];
    return [`${from} -> ${to}: ${floors[b] === floors[a] ? "sideways" : "up"} (${a} ${floors[a]} -> ${b} ${floors[b]})`];
  });
}

/**
 * Imports across the border of a closed unit: a file under a key of `worlds` may import only paths
 * starting with one of its entries, and a file outside may not import into it.
 */
export function closedWorldViolations(edges: ImportEdge[], worlds: Readonly<Record<string, readonly string[]>>): string[] {
  return edges.flatMap(({ from, to }) =>
    Object.entries(worlds).flatMap(([world, allowed]) => {
      if (from.startsWith(world)) return allowed.some((p) => to.startsWith(p)) ? [] : [`${from} -> ${to}: leaves ${world}`];
      return to.startsWith(world) ? [`${from} -> ${to}: enters ${world}`] : [];
    }),
  );
}

/** Every circle of files (strongly connected component of two or more, or a file importing itself), Tarjan's way. */
export function fileCircles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || next.get(file)?.includes(file)) circles.push(component.sort());
  };
  for (const file of next.keys()) if (!index.has(file)) visit(file);
  return circles;
}

/** A table as both its doors name it: Prisma's delegate (`balanceTransaction`) and SQL (`balance_transactions`). */
export interface TableNames {
  model: string;
  delegate: string;
  sql: string;
}

/** The delegate and SQL names of every model in a Prisma schema (`@@map`, or the model's own name). */
export function prismaTables(schema: string): TableNames[] {
  return [...schema.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)].map(([, model, body]) => ({
    model: model!,
    delegate: model![0]!.toLowerCase() + model!.slice(1),
    sql: /@@map\("(\w+)"\)/.exec(body!)?.[1] ?? model!,
  }));
}

/** The calls of a Prisma delegate that only read; any other method (create*, update*, upsert, delete*, *AndReturn) writes. */
const PRISMA_READS = new Set(["findMany", "findFirst", "findUnique", "findUniqueOrThrow", "findFirstOrThrow", "count", "aggregate", "groupBy"]);

/** SQL that changes a table, in any case and over any whitespace; group 1 is the table. */
const SQL_WRITE = /\b(?:insert\s+into|update|delete\s+from)\s+(?:"?public"?\s*\.\s*)?"?(\w+)"?/gi;

function parse(path: string, text: string): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

function lineOf(file: ts.SourceFile, node: ts.Node): number {
  return file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

/** The text of a string or template literal (a template's substitutions as `?`), or null for any other node. */
function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => `?${s.literal.text}`).join("");
  return null;
}

/**
 * The writes to `tables` in one file, as "path:line: what": a Prisma delegate call other than a read
 * (`tx.charge.update(…)`), or a string or template literal holding SQL that inserts into, updates or
 * deletes from one of them (raw queries included, whatever their case or line breaks).
 */
export function tableWrites(path: string, text: string, tables: readonly TableNames[]): string[] {
  const delegates = new Set(tables.map((t) => t.delegate));
  const sqlNames = new Set(tables.map((t) => t.sql.toLowerCase()));
  const file = parse(path, text);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const { expression: receiver, name: method } = node.expression;
      if (ts.isPropertyAccessExpression(receiver) && delegates.has(receiver.name.text) && !PRISMA_READS.has(method.text)) {
        found.push(`${path}:${lineOf(file, node)}: ${receiver.name.text}.${method.text}`);
      }
    }
    const sql = literalText(node);
    if (sql !== null) {
      for (const [statement, table] of sql.matchAll(SQL_WRITE)) {
        if (sqlNames.has(table!.toLowerCase())) found.push(`${path}:${lineOf(file, node)}: ${statement!.replace(/\s+/g, " ")}`);
      }
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The name a function is known by: its own, its variable's, property's or method's, or "(anonymous)". */
function functionName(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) return parent.name.getText();
  return "(anonymous)";
}

/** The functions of one file longer than `limit` lines (declaration to closing brace), as "path:line: name (n lines)". */
export function longFunctions(path: string, text: string, limit: number): string[] {
  const file = parse(path, text);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const lines = file.getLineAndCharacterOfPosition(fn.getEnd()).line + 2 - lineOf(file, fn);
      if (lines > limit) found.push(`${path}:${lineOf(file, fn)}: ${functionName(fn)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The modules that are the process object, whose `env` is the environment. */
const PROCESS_MODULES = new Set(["process", "node:process"]);

/** Whether `node` is `env` as a property name: an identifier, or a string literal naming it. */
function namesEnv(node: ts.Node | undefined): boolean {
  return node !== undefined && (ts.isIdentifier(node) || ts.isStringLiteralLike(node)) && node.text === "env";
}

/** Whether a destructuring pattern takes `env` (`{ env }`, `{ env: e }`, `{ "env": e }`). */
function takesEnv(pattern: ts.Node): boolean {
  if (ts.isObjectBindingPattern(pattern)) return pattern.elements.some((e) => namesEnv(e.propertyName ?? e.name));
  if (ts.isObjectLiteralExpression(pattern)) {
    return pattern.properties.some((p) => (ts.isShorthandPropertyAssignment(p) || ts.isPropertyAssignment(p)) && namesEnv(p.name));
  }
  return false;
}

/**
 * The reads of the environment in one file, as "path:line: what": `process.env`, `process["env"]`,
 * `globalThis.process.env`, `const { env } = process` (or an assignment destructuring it), `env`
 * imported from node:process, and any of these through a name the process object is given
 * (`import proc from "node:process"`, `const p = process`).
 */
export function environmentReads(path: string, text: string): string[] {
  const file = parse(path, text);
  const processNames = new Set(["process"]);
  const found: string[] = [];
  const isProcess = (node: ts.Node): boolean =>
    (ts.isIdentifier(node) && processNames.has(node.text)) || (ts.isPropertyAccessExpression(node) && node.name.text === "process");
  const report = (node: ts.Node) => found.push(`${path}:${lineOf(file, node)}: ${node.getText(file).replace(/\s+/g, " ")}`);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && PROCESS_MODULES.has(node.moduleSpecifier.text)) {
      const clause = node.importClause;
      if (clause?.name) processNames.add(clause.name.text);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) processNames.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings) && bindings.elements.some((e) => namesEnv(e.propertyName ?? e.name))) report(node);
    } else if (ts.isVariableDeclaration(node) && node.initializer && isProcess(node.initializer)) {
      if (ts.isIdentifier(node.name)) processNames.add(node.name.text);
      else if (takesEnv(node.name)) report(node);
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && isProcess(node.right) && takesEnv(node.left)) {
      report(node);
    } else if (ts.isPropertyAccessExpression(node) && node.name.text === "env" && isProcess(node.expression)) {
      report(node);
    } else if (ts.isElementAccessExpression(node) && namesEnv(node.argumentExpression) && isProcess(node.expression)) {
      report(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}
