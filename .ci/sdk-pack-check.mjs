// The SDK as a merchant installs it (issue 33). From a clean tree of the repository (no build
// output), `npm run build:sdk` then `npm pack` in src/sdk makes @stablegate/sdk (whose manifest has
// no scripts: the tarball ships dist/ alone), and `npm pack` at the root gives the tarball an install
// of the repository from git makes (`stablegate/sdk` and the built service its `stablegate` bin runs, built by the root's `prepare`). Each is
// installed into throwaway projects, and against the built service (dist/main.js: run after `npm run build`):
//   - an ES module and a CommonJS script create a charge, have a mock charge.completed delivered to
//     a receiver of theirs and verify it into its typed event (a changed body is refused);
//   - a TypeScript program (strict, exactOptionalPropertyTypes; moduleResolution node10 for a
//     CommonJS project, nodenext for an ES module one) narrows a verified event on its type and
//     reads a field of its data, reads a list's page as a list and `expand: "stats"` as the stats,
//     all with no cast.
// @stablegate/sdk is installed with --offline: it must depend on nothing.
//
// Usage: node .ci/sdk-pack-check.mjs [--working-tree]
// The tree is HEAD's (`git archive`). --working-tree takes the working tree's files instead (tracked
// and untracked, minus what .gitignore ignores, so still no build output): for a run before the
// changes are committed. CI runs it without.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const repo = new URL("..", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "sg-sdk-pack-"));
const tree = join(work, "tree");
const tarballs = join(work, "tarballs");
const tsc = join(repo, "node_modules/typescript/bin/tsc");
const run = (cmd, args, cwd, env = process.env) => execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
const npm = (args, cwd) => run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], cwd);
const step = (what) => console.log(`--- ${what}`);

let service;
try {
  step(process.argv.includes("--working-tree") ? "a clean tree of the working tree's files" : "a clean tree of HEAD");
  mkdirSync(tree);
  if (process.argv.includes("--working-tree")) {
    const files = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], repo).split("\0");
    for (const file of files.filter((f) => f && existsSync(join(repo, f)))) {
      mkdirSync(dirname(join(tree, file)), { recursive: true });
      cpSync(join(repo, file), join(tree, file));
    }
  } else {
    execFileSync("sh", ["-c", `git archive HEAD | tar -x -C "${tree}"`], { cwd: repo, stdio: "inherit" });
  }
  if (existsSync(join(tree, "src/sdk/dist"))) throw new Error("the clean tree has src/sdk/dist: build output is committed");
  // The builds need only the root's TypeScript, which CI's `npm ci` has installed here: link it
  // rather than install the server's dependencies a second time.
  symlinkSync(join(repo, "node_modules"), join(tree, "node_modules"));

  step("npm run build:sdk, npm pack in src/sdk, and npm pack at the root (the root's prepare builds the SDK)");
  mkdirSync(tarballs);
  npm(["run", "build:sdk"], tree);
  npm(["pack", "--pack-destination", tarballs], join(tree, "src/sdk"));
  npm(["pack", "--pack-destination", tarballs], tree);
  const version = (dir) => JSON.parse(readFileSync(join(tree, dir, "package.json"), "utf8")).version;
  const sdkTarball = join(tarballs, `stablegate-sdk-${version("src/sdk")}.tgz`);
  const rootTarball = join(tarballs, `stablegate-${version(".")}.tgz`);
  checkContents(sdkTarball, "package/dist/", ["esm/sdk/index.js", "esm/sdk/index.d.ts", "cjs/sdk/index.js", "cjs/sdk/index.d.ts", "cjs/package.json"]);
  checkContents(rootTarball, "package/src/sdk/dist/", ["esm/sdk/index.js", "cjs/sdk/index.js", "cjs/sdk/index.d.ts"], "package/dist/");
  // The root's prepare builds the service too, and its bin (stablegate) needs the rest of dist/.
  checkContents(rootTarball, "package/dist/", ["cli/main.js", "main.js", "db/template.json"], "package/src/sdk/dist/");
  const manifest = JSON.parse(run("tar", ["-xzOf", sdkTarball, "package/package.json"], work));
  const dependencies = ["dependencies", "peerDependencies", "optionalDependencies"].flatMap((field) => Object.keys(manifest[field] ?? {}));
  if (dependencies.length > 0) throw new Error(`@stablegate/sdk depends on ${dependencies.join(", ")}: it should need nothing but Node`);
  // An installer would run them, and they could name only files the tarball does not ship.
  if (manifest.scripts !== undefined) throw new Error(`@stablegate/sdk's packed package.json has scripts (${Object.keys(manifest.scripts).join(", ")})`);

  step("the built service (dist/main.js) on an empty embedded database");
  if (!existsSync(join(repo, "dist/main.js"))) throw new Error("dist/main.js is missing: run npm run build first");
  service = startService();
  const url = (await service.waitFor(/"url":"(http:\/\/[^"]+)"/))[1];
  const apiKey = (await service.waitFor(/(sk_test_[A-Za-z0-9]+)/))[1];

  for (const [name, from, install] of [
    ["@stablegate/sdk", "sdk-tarball", (dir) => npm(["install", "--offline", sdkTarball], dir)],
    // What an install from git unpacks, without the server's dependencies (the SDK uses none of them).
    [
      "stablegate/sdk",
      "root-tarball",
      (dir) => {
        mkdirSync(join(dir, "node_modules/stablegate"), { recursive: true });
        run("tar", ["-xzf", rootTarball, "-C", join(dir, "node_modules/stablegate"), "--strip-components=1"], dir);
      },
    ],
  ]) {
    for (const type of ["module", "commonjs"]) {
      step(`${name} in ${type === "module" ? "an ES module" : "a CommonJS"} project: a charge, a verified webhook, and tsc`);
      const dir = join(work, `${from}-${type}`);
      mkdirSync(dir);
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type }));
      install(dir);
      const script = join(dir, type === "module" ? "main.mjs" : "main.cjs");
      writeFileSync(script, consumerScript(name, type));
      const out = run(process.execPath, [script], dir, { ...process.env, SG_URL: url, SG_KEY: apiKey });
      console.log(out.trim());
      writeFileSync(join(dir, "check.ts"), typedProgram(name));
      const compilerOptions = {
        ...(type === "module" ? { module: "nodenext", moduleResolution: "nodenext" } : { module: "commonjs", moduleResolution: "node10" }),
        target: "es2022",
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        // skipLibCheck stays off: the SDK's declarations must compile under these settings too.
        // @types/node is the repository's (a Node backend has it).
        typeRoots: [join(repo, "node_modules/@types")],
        types: ["node"],
      };
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["check.ts"] }));
      try {
        run(process.execPath, [tsc, "-p", dir], dir);
      } catch (e) {
        throw new Error(`tsc refuses ${join(dir, "check.ts")}:\n${e.stdout}`);
      }
      console.log(`tsc (${compilerOptions.moduleResolution}): no errors`);
    }
  }
  step("done: the SDK installs from its tarball and the repository's, and works from ESM, CommonJS and node10 TypeScript");
} catch (e) {
  if (service) console.error(`--- the service's output:\n${service.output().slice(-3000)}`);
  throw e;
} finally {
  if (service && service.child.exitCode === null) {
    service.child.kill("SIGTERM");
    await service.exited;
  }
  rmSync(work, { recursive: true, force: true });
}

/** Fails unless the tarball has each of `expected` below `prefix`, and nothing outside it (and `also`) but package.json and README/LICENSE. */
function checkContents(tarball, prefix, expected, also = prefix) {
  const files = run("tar", ["-tzf", tarball], work).trim().split("\n");
  const missing = expected.filter((f) => !files.includes(prefix + f));
  const stray = files.filter((f) => !f.startsWith(prefix) && !f.startsWith(also) && !/^package\/(package\.json|README\.md|LICENSE)$/.test(f));
  if (missing.length || stray.length) throw new Error(`${tarball}: missing ${missing.join(", ") || "nothing"}; unexpected ${stray.join(", ") || "nothing"}`);
  console.log(`${tarball.slice(tarballs.length + 1)}: ${files.length} files`);
}

/** `node dist/main.js` in development (it prints a demo merchant's test key) on a fresh data dir, any free port. */
function startService() {
  const env = {
    ...process.env,
    DATA_DIR: join(work, "data"),
    PORT: "0",
    DATABASE_URL: "",
    REDIS_URL: "",
    DEVNET: "false",
    NODE_ENV: "development",
    LOG_LEVEL: "info",
  };
  const child = spawn(process.execPath, ["dist/main.js"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    child,
    exited,
    output: () => out,
    async waitFor(pattern, timeoutMs = 180_000) {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const m = pattern.exec(out);
        if (m) return m;
        if (child.exitCode !== null) break;
      }
      throw new Error(`dist/main.js did not print ${pattern}`);
    },
  };
}

/**
 * A merchant's script: a charge, then a webhook endpoint of its own receiver, a mock
 * charge.completed delivered there, and the delivery verified into its event. It also checks which
 * build Node loaded (esm/ for import, cjs/ for require).
 */
function consumerScript(name, type) {
  const load =
    type === "module"
      ? `import http from "node:http";\nimport { Stablegate, WebhookVerificationError } from "${name}";\nconst loaded = import.meta.resolve("${name}");`
      : `const http = require("node:http");\nconst { Stablegate, WebhookVerificationError } = require("${name}");\nconst loaded = require.resolve("${name}");`;
  const build = type === "module" ? "/dist/esm/sdk/index.js" : "/dist/cjs/sdk/index.js";
  return `${load}

async function main() {
  if (!loaded.endsWith("${build}")) throw new Error("loaded " + loaded + ", not the ${build} build");
  const sg = new Stablegate({ apiKey: process.env.SG_KEY, baseUrl: process.env.SG_URL });
  const charge = await sg.charges.create({ orderId: "pack-check-" + crypto.randomUUID(), amount: "12.50" });
  if (charge.status !== "PENDING" || charge.amount !== "12.50") throw new Error("unexpected charge " + JSON.stringify(charge));

  const deliveries = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      deliveries.push({ body, headers: req.headers });
      res.end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const endpoint = await sg.webhookEndpoints.create({ url: "http://127.0.0.1:" + receiver.address().port + "/hook", events: ["charge.completed"] });
  try {
    const sent = await sg.webhooks.sendTest({ type: "charge.completed" });
    const deadline = Date.now() + 30000;
    let delivery;
    while (!(delivery = deliveries.find((d) => JSON.parse(d.body).id === sent.id))) {
      if (Date.now() > deadline) throw new Error("no delivery of " + sent.id + " within 30 s");
      await new Promise((r) => setTimeout(r, 100));
    }
    const event = sg.webhooks.verify(delivery.body, delivery.headers, endpoint.secret);
    if (event.type !== "charge.completed" || event.data.status !== "COMPLETED") throw new Error("unexpected event " + delivery.body);
    let refused = false;
    try {
      sg.webhooks.verify(delivery.body.replace("COMPLETED", "CANCELLED"), delivery.headers, endpoint.secret);
    } catch (e) {
      refused = e instanceof WebhookVerificationError;
    }
    if (!refused) throw new Error("a changed body was not refused");
    console.log("created " + charge.id + ", verified " + event.type + " " + event.id + " with ${build}");
  } finally {
    await sg.webhookEndpoints.delete(endpoint.id);
    receiver.close();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
`;
}

/** A typed merchant program: it compiles only if verify's result is a union narrowed by `type`. */
function typedProgram(name) {
  return `import { Stablegate, StablegateError, type Charge, type WebhookEvent } from "${name}";

const sg = new Stablegate({ apiKey: "sk_test_x", baseUrl: "http://127.0.0.1:1" });

export async function checkout(orderId: string): Promise<Charge> {
  // @ts-expect-error amounts are decimal strings
  await sg.charges.create({ orderId, amount: 12.5 });
  return sg.charges.create({ orderId, amount: "12.50", metadata: { sku: "mug" } });
}

export function onWebhook(rawBody: string, headers: Record<string, string | string[] | undefined>, secret: string): string | null {
  const event: WebhookEvent = sg.webhooks.verify(rawBody, headers, secret);
  if (event.type === "charge.completed") {
    const received: string | null = event.data.amountReceived;
    // @ts-expect-error a charge has no such field
    void event.data.nothing;
    return received;
  }
  // @ts-expect-error no such event type
  if (event.type === "charge.paid") return null;
  if (event.type === "customer.created") return event.data.email;
  return event.type;
}

export async function reviewQueue(): Promise<string[]> {
  // A page of the list is a list (its JSON answer is not typed as "JSON or CSV text").
  const page = await sg.charges.list({ needsReview: "true", limit: 100 });
  const ids: string[] = page.data.map((c) => c.id);
  const csv: string = await sg.charges.csv({ needsReview: "true" });
  return csv.length > 0 ? ids : [];
}

export async function loyalty(customerId: string): Promise<number> {
  // expand: "stats" gives the customer with its stats; without it, the customer has none.
  const withStats = await sg.customers.retrieve(customerId, { expand: "stats" });
  const spent: string = withStats.totalSpent;
  // @ts-expect-error a customer retrieved without expand has no stats
  void (await sg.customers.retrieve(customerId)).chargeCount;
  return spent === "0.00" ? 0 : withStats.chargeCount;
}

export function code(e: unknown): string | null {
  return e instanceof StablegateError ? e.code : null;
}
`;
}
