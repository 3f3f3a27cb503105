// The checkers behind test/architecture.test.ts, as pure functions over source texts keyed by their
// path inside src/ ("rest/charges.ts"), so that each rule can be shown to fail on a planted
// violation without touching the tree. Imports, writes and function lengths come from the
// TypeScript compiler's syntax tree of every source, .js/.mjs/.cjs included: comments and prose
// never count, and an import is one however it is written (static, type-only, re-export, `import()`,
// `require`, a package's own name), while one whose specifier is computed is refused outright.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";

/** Source texts by their path relative to src/ ("rest/charges.ts"). */
export type Sources = ReadonlyMap<string, string>;

/** One import between two files of src/, both named by their path relative to src/. */
export interface ImportEdge {
  from: string;
  to: string;
}

/**
 * A package whose files live in src/, as its package.json declares it: `dir` is its folder relative
 * to src/ (".." for the repository's root), `exports` and `imports` its maps. A file of src/ naming
 * it (`stablegate/sdk`, `#x`) imports its own sources under another name.
 */
export interface PackageJson {
  dir: string;
  name: string;
  exports?: unknown;
  imports?: unknown;
}

/**
 * Files the server hands out under another path, as "what an import names" → "the source it gets":
 * the hosted pages' scripts import `./money.js`, which the service serves from src/lib/ (pay/asset-routes.ts).
 */
export type Served = Readonly<Record<string, string>>;

/** The extensions of a source: TypeScript and JavaScript, modules and scripts alike. */
const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/** Every source file under `root` (.ts, .tsx, .js, .mjs, .cjs…), by its path relative to it; build output is not a source. */
export function readSources(root: string): Sources {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return e.name === "dist" || e.name === "node_modules" ? [] : walk(path);
      return SOURCE.test(e.name) ? [path] : [];
    });
  return new Map(walk(root).map((path) => [relative(root, path), readFileSync(path, "utf8")]));
}

/** Whether `path` is written by a generator (src/generated, a .d.ts such as graphql-env.d.ts), not by hand. */
export function isGenerated(path: string): boolean {
  return path.startsWith("generated/") || /\.d\.[cm]?ts$/.test(path);
}

/**
 * The unit `path` belongs to: its top folder, or the file itself (without extension) at the top of
 * src/. The browser's code, dashboard/web, is a unit of its own.
 */
export function unitOf(path: string): string {
  if (path.startsWith("dashboard/web/")) return "dashboard/web";
  const [first, ...rest] = path.split("/");
  return rest.length === 0 ? first!.replace(/(?:\.d)?\.(?:[cm]?[jt]s|[jt]sx)$/, "") : first!;
}

function parse(path: string, text: string): ts.SourceFile {
  const kind = /\.[jt]sx$/.test(path)
    ? path.endsWith(".tsx")
      ? ts.ScriptKind.TSX
      : ts.ScriptKind.JSX
    : /\.[cm]?js$/.test(path)
      ? ts.ScriptKind.JS
      : ts.ScriptKind.TS;
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
}

function lineOf(file: ts.SourceFile, node: ts.Node): number {
  return file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

/** The file of `sources` a path relative to src/ names (`x.js` is x.ts, x.tsx, x.js or x.d.ts; a folder its index), or null. */
function sourceAt(sources: Sources, target: string): string | null {
  const stem = target.replace(/(?:\.d)?\.(?:[cm]?[jt]s|[jt]sx)$/, "");
  const endings = [".ts", ".tsx", ".d.ts", ".js", ".mjs", ".cjs", ".jsx"];
  const candidates = [target, ...endings.map((e) => stem + e), ...endings.map((e) => `${target}/index${e}`)];
  return candidates.find((c) => sources.has(c)) ?? null;
}

/**
 * The paths inside a package that an exports or imports map gives `subpath` ("./sdk", "#x"), under
 * every condition; a key with `*` matches as Node matches it. Empty when the map has no such entry.
 */
function mapped(map: unknown, subpath: string): string[] {
  if (map === undefined || map === null) return [];
  if (typeof map === "string" || Array.isArray(map) || !Object.keys(map).some((k) => k.startsWith(".") || k.startsWith("#"))) {
    return subpath === "." ? targets(map, "") : [];
  }
  for (const [key, value] of Object.entries(map as Record<string, unknown>)) {
    if (key === subpath) return targets(value, "");
    const star = key.indexOf("*");
    if (star < 0) continue;
    const [head, tail] = [key.slice(0, star), key.slice(star + 1)];
    if (subpath.startsWith(head) && subpath.endsWith(tail) && subpath.length >= key.length - 1) {
      return targets(value, subpath.slice(head.length, subpath.length - tail.length));
    }
  }
  return [];
}

/** Every path a map's value names, conditions and fallbacks included, with `*` replaced by `star`. */
function targets(value: unknown, star: string): string[] {
  if (typeof value === "string") return [value.replaceAll("*", star)];
  if (Array.isArray(value)) return value.flatMap((v) => targets(v, star));
  if (value && typeof value === "object") return Object.values(value).flatMap((v) => targets(v, star));
  return [];
}

/**
 * The source a path inside a package names, relative to src/: build output (`dist/…`,
 * `dist/esm/…`, `dist/cjs/…`) stands for the source it is built from, `src/…` for itself.
 */
function packagePathToSource(pkg: PackageJson, path: string): string {
  const fromRoot = normalize(join("src", pkg.dir, path));
  const built = /(?:^|\/)dist\/(?:esm\/|cjs\/)?(.*)$/.exec(fromRoot);
  if (built) return built[1]!;
  return fromRoot.startsWith("src/") ? fromRoot.slice(4) : fromRoot;
}

/** How one file names another: the specifier (null when computed), where, and in what form. */
interface ModuleReference {
  specifier: string | null;
  line: number;
  form: string;
}

/** The text of a string literal or a template without substitutions, or null. */
function literal(node: ts.Node | undefined): string | null {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : null;
}

/** The name a callee is called by: `f` of `f(…)`, `m` of `x.m(…)`, or null. */
function calleeName(node: ts.Expression): string | null {
  const callee = skipWrappers(node);
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return null;
}

/** An expression without parentheses, type assertions and `!`, which change nothing at run time. */
function skipWrappers(node: ts.Expression): ts.Expression {
  while (
    ts.isParenthesizedExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isNonNullExpression(node) ||
    ts.isSatisfiesExpression(node) ||
    ts.isTypeAssertionExpression(node)
  ) {
    node = node.expression;
  }
  return node;
}

/**
 * Every module one file loads or names, however written: `import`/`export … from`, `import x =
 * require()`, `import("…")` in code and in types, `require(…)` and what `createRequire` gives (called
 * at once or through a name it is bound to).
 */
function moduleReferences(path: string, text: string): ModuleReference[] {
  const file = parse(path, text);
  const requires = new Set(["require"]);
  const isRequire = (callee: ts.Expression): boolean => {
    const c = skipWrappers(callee);
    if (ts.isIdentifier(c)) return requires.has(c.text);
    return ts.isCallExpression(c) && calleeName(c.expression) === "createRequire";
  };
  const bind = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const init = skipWrappers(node.initializer);
      if ((ts.isCallExpression(init) && calleeName(init.expression) === "createRequire") || (ts.isIdentifier(init) && requires.has(init.text)))
        requires.add(node.name.text);
    }
    ts.forEachChild(node, bind);
  };
  bind(file);
  const found: ModuleReference[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined, form: string) => found.push({ specifier: literal(specifier), line: lineOf(file, node), form });
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) add(node, node.moduleSpecifier, "import");
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, node.moduleReference.expression, "import = require()");
    else if (ts.isImportTypeNode(node)) add(node, ts.isLiteralTypeNode(node.argument) ? node.argument.literal : undefined, "import() type");
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0], "import()");
    else if (ts.isCallExpression(node) && isRequire(node.expression)) add(node, node.arguments[0], "require()");
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** What `from`'s specifier names among `sources`: a file, "external" (a package of another name, node:…), or a refusal. */
function resolveSpecifier(
  sources: Sources,
  packages: readonly PackageJson[],
  from: string,
  specifier: string,
  served: Served,
): { to: string } | "external" | { refused: string } {
  if (specifier.startsWith(".")) {
    const target = normalize(join(dirname(from), specifier));
    const to = sourceAt(sources, served[target] ?? target);
    if (to) return { to };
    // JSON is data (the contracts' artifacts): it imports nothing, so it cannot break a floor.
    return target.endsWith(".json") ? "external" : { refused: "a relative path to no source" };
  }
  if (specifier.startsWith("node:")) return "external";
  if (specifier.startsWith("/") || /^[a-z][\w+.-]*:/i.test(specifier)) return { refused: "an absolute path or URL" };
  const own = specifier.startsWith("#")
    ? packages.map((pkg) => ({ pkg, paths: mapped(pkg.imports, specifier) })).filter(({ paths }) => paths.length > 0)
    : packages
        .filter((pkg) => specifier === pkg.name || specifier.startsWith(`${pkg.name}/`))
        // The path as written too, even where the exports map would refuse it at run time.
        .map((pkg) => ({ pkg, paths: [...mapped(pkg.exports, `.${specifier.slice(pkg.name.length)}`), `.${specifier.slice(pkg.name.length)}`] }));
  if (own.length === 0) return specifier.startsWith("#") ? { refused: "a subpath import no package maps" } : "external";
  const to = own.flatMap(({ pkg, paths }) => paths.map((p) => sourceAt(sources, packagePathToSource(pkg, p)))).find((f) => f !== null);
  return to ? { to } : { refused: "the package's own name for no source" };
}

/** What one file imports, as written (null for a computed specifier): for the files that must import nothing, or no package. */
export function importsOf(path: string, text: string): (string | null)[] {
  return moduleReferences(path, text).map(({ specifier }) => specifier);
}

/** Every import between files of `sources`, however it is written (see moduleReferences), a package's own name included. */
export function importGraph(sources: Sources, packages: readonly PackageJson[] = [], served: Served = {}): ImportEdge[] {
  return [...sources].flatMap(([from, text]) =>
    moduleReferences(from, text).flatMap(({ specifier }) => {
      const resolved = specifier === null ? "external" : resolveSpecifier(sources, packages, from, specifier, served);
      return typeof resolved === "object" && "to" in resolved ? [{ from, to: resolved.to }] : [];
    }),
  );
}

/**
 * The imports no reader can follow, as "path:line: form of what": a computed specifier (`import(x)`,
 * `require(`./${name}`)`), an absolute path or URL, a relative path to no source (JSON data aside;
 * `served` names the files the server hands out under another path), a subpath import (`#x`) no
 * package maps, and the package's own name for no source. What they load is unknown, so each is
 * refused outright.
 */
export function importRefusals(sources: Sources, packages: readonly PackageJson[] = [], served: Served = {}): string[] {
  return [...sources].flatMap(([from, text]) =>
    moduleReferences(from, text).flatMap(({ specifier, line, form }) => {
      if (specifier === null) return [`${from}:${line}: ${form} of a computed specifier`];
      const resolved = resolveSpecifier(sources, packages, from, specifier, served);
      return typeof resolved === "object" && "refused" in resolved ? [`${from}:${line}: ${form} of "${specifier}", ${resolved.refused}`] : [];
    }),
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

/** The methods of a Prisma delegate that only read; every other one is a write (a test holds the generated delegates to the two lists). */
export const PRISMA_READS = new Set(["findMany", "findFirst", "findUnique", "findUniqueOrThrow", "findFirstOrThrow", "count", "aggregate", "groupBy"]);

/** The methods that write, by name: so that one taken without a call (`const up = tx.charge.update`) is found too. */
export const PRISMA_WRITES = /^(?:(?:create|update)(?:Many(?:AndReturn)?)?|upsert|delete(?:Many)?)$/;

/** What stands in a text the checker builds for a part it cannot know (a parameter, a call's answer). */
const UNKNOWN = "\u0000";

/** A table's name in SQL: quoted ("" inside), bare, or partly unknown. */
const NAME = `(?:"(?:[^"]|"")+"|[\\w$${UNKNOWN}]+)`;

/**
 * SQL that changes a table, in any case, over any whitespace and comments, its name quoted or not and
 * qualified by a schema or not: INSERT INTO, UPDATE [ONLY], DELETE FROM [ONLY], MERGE INTO,
 * TRUNCATE [TABLE] [ONLY], COPY … FROM. Group 1 (or 2, for COPY) is the table, qualified.
 */
const SQL_WRITE = new RegExp(
  `\\b(?:insert\\s+into|update(?:\\s+only)?|delete\\s+from(?:\\s+only)?|merge\\s+into(?:\\s+only)?|truncate(?:\\s+table)?(?:\\s+only)?)\\s+(${NAME}(?:\\s*\\.\\s*${NAME})*)` +
    `|\\bcopy\\s+(${NAME}(?:\\s*\\.\\s*${NAME})*)(?:\\s*\\([^)]*\\))?\\s+from\\b`,
  "gi",
);

/** The statements of `sql` that write one of `tables` (by SQL name, lower case), or write a table named by an unknown part of a text that is SQL. */
function sqlWrites(sql: string, tables: ReadonlySet<string>): string[] {
  const bare = sql.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/--[^\n]*/g, " ");
  const isSql = /\b(?:set|values|where|returning|using|select)\b/i.test(bare);
  return [...bare.matchAll(SQL_WRITE)].flatMap(([statement, a, b]) => {
    const last = new RegExp(`${NAME}$`).exec((a ?? b)!)![0];
    const table = last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last;
    const guarded = table.includes(UNKNOWN) ? isSql : tables.has(table.toLowerCase());
    return guarded ? [statement.replaceAll(UNKNOWN, "?").replace(/\s+/g, " ")] : [];
  });
}

/**
 * The texts of one file's expressions as far as the file says: literals and templates, `+`,
 * `[…].join()`, `concat`, `Prisma.raw`/`Prisma.join`, the case changes, and names declared in the
 * file (a `let` with every `+=` to it, in order). What it cannot know becomes UNKNOWN; null is no text.
 */
function textEvaluator(file: ts.SourceFile): { text: (node: ts.Node) => string | null; accumulated: (name: ts.Identifier) => string | null } {
  const values = new Map<string, ts.Expression[]>();
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && !values.has(node.name.text))
      values.set(node.name.text, [node.initializer]);
    ts.forEachChild(node, collect);
  };
  collect(file);
  const append = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusEqualsToken && ts.isIdentifier(node.left))
      values.get(node.left.text)?.push(node.right);
    ts.forEachChild(node, append);
  };
  append(file);
  const busy = new Set<string>();
  const value = (name: string): string | null => {
    const parts = values.get(name);
    if (!parts || busy.has(name)) return null;
    busy.add(name);
    const texts = parts.map(text);
    busy.delete(name);
    return texts.every((t) => t === null) ? null : texts.map((t) => t ?? UNKNOWN).join("");
  };
  const items = (node: ts.Expression): (string | null)[] | null => {
    const e = skipWrappers(node);
    if (ts.isArrayLiteralExpression(e)) return e.elements.flatMap((el) => (ts.isSpreadElement(el) ? (items(el.expression) ?? [null]) : [text(el)]));
    if (!ts.isIdentifier(e) || busy.has(e.text)) return null;
    const parts = values.get(e.text);
    if (parts?.length !== 1) return null;
    busy.add(e.text);
    const list = items(parts[0]!);
    busy.delete(e.text);
    return list;
  };
  const joined = (list: (string | null)[], separator: ts.Expression | undefined) =>
    list.map((t) => t ?? UNKNOWN).join(separator ? (text(separator) ?? UNKNOWN) : ",");
  const call = (node: ts.CallExpression): string | null => {
    const name = calleeName(node.expression);
    const receiver = ts.isPropertyAccessExpression(node.expression) ? node.expression.expression : undefined;
    const [first, second] = node.arguments;
    if (name === "join") {
      const own = receiver && items(receiver);
      if (own) return joined(own, first);
      const given = first && items(first);
      return given ? joined(given, second) : null;
    }
    if (name === "concat" && receiver) {
      const head = text(receiver);
      return head === null ? null : head + node.arguments.map((a) => text(a) ?? UNKNOWN).join("");
    }
    if ((name === "raw" || name === "String") && first) return text(first);
    if (receiver && ["toUpperCase", "toLowerCase", "trim", "trimStart", "trimEnd"].includes(name ?? "")) return text(receiver);
    return null;
  };
  const text = (node: ts.Node): string | null => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => (text(s.expression) ?? UNKNOWN) + s.literal.text).join("");
    if (ts.isTaggedTemplateExpression(node)) return text(node.template);
    if (ts.isBinaryExpression(node) && [ts.SyntaxKind.PlusToken, ts.SyntaxKind.PlusEqualsToken].includes(node.operatorToken.kind)) {
      const [left, right] = [text(node.left), text(node.right)];
      return left === null && right === null ? null : (left ?? UNKNOWN) + (right ?? UNKNOWN);
    }
    if (ts.isConditionalExpression(node)) {
      const [yes, no] = [text(node.whenTrue), text(node.whenFalse)];
      return yes === no ? yes : UNKNOWN;
    }
    if (ts.isExpression(node) && skipWrappers(node) !== node) return text(skipWrappers(node));
    if (ts.isIdentifier(node)) return value(node.text);
    if (ts.isCallExpression(node)) return call(node);
    return null;
  };
  const accumulated = (name: ts.Identifier) => ((values.get(name.text)?.length ?? 0) > 1 ? value(name.text) : null);
  return { text, accumulated };
}

/** Whether `node` builds a text of its own (a literal, a template, `+`, a join…), as opposed to naming one built elsewhere. */
function buildsText(node: ts.Node): boolean {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node) || ts.isTaggedTemplateExpression(node)) return true;
  if (ts.isBinaryExpression(node)) return node.operatorToken.kind === ts.SyntaxKind.PlusToken;
  return ts.isCallExpression(node) && ["join", "concat", "raw", "String"].includes(calleeName(node.expression) ?? "");
}

/**
 * The names a file binds to a Prisma delegate, and the delegate each one is: `const c = tx.charge`,
 * `const { charge } = prisma` (a parameter's `({ charge }) =>` too), `c = tx["charge"]`, `({ charge:
 * c } = tx)`, and a name bound to such a name. Scopes are not told apart: a name once bound to a
 * delegate is one everywhere in the file, which can only find more.
 */
function delegateNames(file: ts.SourceFile, delegates: ReadonlySet<string>, text: (node: ts.Node) => string | null): (node: ts.Expression) => string | null {
  const names = new Map<string, string>();
  const delegateOf = (node: ts.Expression): string | null => {
    const e = skipWrappers(node);
    if (ts.isPropertyAccessExpression(e) && delegates.has(e.name.text)) return e.name.text;
    if (ts.isElementAccessExpression(e)) {
      const key = text(e.argumentExpression);
      if (key !== null && delegates.has(key)) return key;
    }
    return ts.isIdentifier(e) ? (names.get(e.text) ?? null) : null;
  };
  const bind = (name: ts.Node, delegate: string | null) => {
    if (delegate && ts.isIdentifier(name) && !names.has(name.text)) names.set(name.text, delegate);
  };
  const propertyKey = (name: ts.PropertyName | ts.BindingName): string | null =>
    ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : ts.isComputedPropertyName(name) ? text(name.expression) : null;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.initializer) bind(node.name, delegateOf(node.initializer));
    if (ts.isBindingElement(node) && !node.dotDotDotToken) {
      const key = propertyKey(node.propertyName ?? node.name);
      bind(node.name, key !== null && delegates.has(key) ? key : null);
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      bind(skipWrappers(node.left), delegateOf(node.right));
      const target = skipWrappers(node.left);
      if (ts.isObjectLiteralExpression(target)) {
        for (const p of target.properties) {
          if (ts.isShorthandPropertyAssignment(p)) bind(p.name, delegates.has(p.name.text) ? p.name.text : null);
          if (ts.isPropertyAssignment(p)) {
            const key = propertyKey(p.name);
            bind(skipWrappers(p.initializer), key !== null && delegates.has(key) ? key : null);
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  // A name bound to a name is known once the first is: go again until nothing new is learnt.
  for (let size = -1; size !== names.size;) {
    size = names.size;
    visit(file);
  }
  return delegateOf;
}

/**
 * The Prisma writes to `tables` in one file, as "path:line: delegate.method": a call of a delegate's
 * method other than a read, however the delegate is reached (`tx.charge`, `tx["charge"]`, a name it
 * was given or destructured into), a computed method of a delegate (`tx.charge[m](…)`), a writing
 * method taken without a call (`const up = tx.charge.update`, `const { update } = tx.charge`), and a
 * writing method called on a delegate whose name is computed (`tx[model].update(…)`).
 */
function delegateWrites(path: string, file: ts.SourceFile, tables: readonly TableNames[], text: (node: ts.Node) => string | null): string[] {
  const delegateOf = delegateNames(file, new Set(tables.map((t) => t.delegate)), text);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => found.push(`${path}:${lineOf(file, node)}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
      const delegate = delegateOf(node.expression);
      const method = ts.isPropertyAccessExpression(node) ? node.name.text : text(node.argumentExpression);
      const called = ts.isCallExpression(node.parent) && node.parent.expression === node;
      const receiver = skipWrappers(node.expression);
      if (delegate && (method === null || method.includes(UNKNOWN))) {
        if (called) report(node, `${delegate}[?]`);
      } else if (delegate && PRISMA_WRITES.test(method!)) {
        // Prisma's writing methods only: a field named like a model (`claims.email.toLowerCase()`)
        // is a string, and a delegate has no other way to write.
        report(node, `${delegate}.${method}`);
      }
      if (!delegate && called && method && PRISMA_WRITES.test(method) && ts.isElementAccessExpression(receiver) && text(receiver.argumentExpression) === null) {
        report(node, `[?].${method}`);
      }
    }
    if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) {
      const delegate = delegateOf(node.initializer);
      for (const element of node.name.elements) {
        const key = (element.propertyName ?? element.name).getText(file);
        if (delegate && (element.dotDotDotToken || PRISMA_WRITES.test(key))) report(element, `${delegate}.${element.dotDotDotToken ? "…" : key}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/**
 * The writes to `tables` in one file, as "path:line: what": a Prisma write (see delegateWrites), or a
 * text built in the file (literals, templates and their pieces joined however: see textEvaluator)
 * holding SQL that writes one of them, or writes a table whose name the file does not give.
 */
export function tableWrites(path: string, text: string, tables: readonly TableNames[]): string[] {
  const file = parse(path, text);
  const evaluate = textEvaluator(file);
  const sqlNames = new Set(tables.map((t) => t.sql.toLowerCase()));
  const found = delegateWrites(path, file, tables, evaluate.text);
  // A text found writing is not reported again for the pieces it is built from.
  const visit = (node: ts.Node, above: ReadonlySet<string>): void => {
    const sql = buildsText(node) ? evaluate.text(node) : ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) ? evaluate.accumulated(node.name) : null;
    let here = above;
    if (sql !== null) {
      const statements = sqlWrites(sql, sqlNames);
      found.push(...statements.filter((s) => !above.has(s)).map((s) => `${path}:${lineOf(file, node)}: ${s}`));
      if (statements.length > 0) here = new Set([...above, ...statements]);
    }
    ts.forEachChild(node, (child) => visit(child, here));
  };
  visit(file, new Set());
  return found;
}

/** The name a function is known by: its own, its variable's, property's or method's, or "(anonymous)". */
function functionName(node: ts.FunctionLikeDeclaration | ts.ClassStaticBlockDeclaration): string {
  if (ts.isClassStaticBlockDeclaration(node)) return "static {}";
  const prefix = ts.isGetAccessor(node) ? "get " : ts.isSetAccessor(node) ? "set " : "";
  if (node.name) return prefix + node.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) return parent.name.getText();
  return "(anonymous)";
}

/**
 * The functions of one file longer than `limit` lines (declaration to closing brace), as "path:line:
 * name (n lines)": declarations, expressions and arrows, methods, accessors and constructors of
 * classes and object literals, and a class's `static {}` blocks.
 */
export function longFunctions(path: string, text: string, limit: number): string[] {
  const file = parse(path, text);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isFunctionLike(node) && "body" in node && node.body) || ts.isClassStaticBlockDeclaration(node)) {
      const fn = node as ts.FunctionLikeDeclaration | ts.ClassStaticBlockDeclaration;
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
 * `globalThis.process.env` (or `globalThis["process"]`), `Reflect.get(process, "env")`, `const { env }
 * = process` (or an assignment destructuring it), `env` imported from node:process (statically, by
 * `import()` or `require`), and any of these through a name the process object is given (`import
 * proc from "node:process"`, `const p = process`).
 */
export function environmentReads(path: string, text: string): string[] {
  const file = parse(path, text);
  const processNames = new Set(["process"]);
  const found: string[] = [];
  const loadsProcess = (node: ts.Node): boolean =>
    ts.isCallExpression(node) &&
    (node.expression.kind === ts.SyntaxKind.ImportKeyword || calleeName(node.expression) === "require") &&
    PROCESS_MODULES.has(literal(node.arguments[0]) ?? "");
  const isProcess = (node: ts.Node): boolean => {
    const e = ts.isAwaitExpression(node) ? node.expression : node;
    return (
      (ts.isIdentifier(e) && processNames.has(e.text)) ||
      (ts.isPropertyAccessExpression(e) && e.name.text === "process") ||
      (ts.isElementAccessExpression(e) && literal(e.argumentExpression) === "process") ||
      loadsProcess(e)
    );
  };
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
    } else if (ts.isCallExpression(node) && node.expression.getText(file) === "Reflect.get" && isProcess(node.arguments[0]!) && namesEnv(node.arguments[1])) {
      report(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}
