// The image without a Docker daemon: runs .docker/Dockerfile's instructions here, in order, one
// folder per stage standing for its /app (COPY, RUN, ENV, WORKDIR; apt-get packages must be on this
// machine; USER and chown are the only parts left to Docker; a stage FROM another starts as a copy),
// on whatever `node` is first on PATH (CI runs it on this machine's Node and on Node 24). Then:
// the runtime stage holds production dependencies only (no Prisma CLI, TypeScript or anvil) and its
// size is reported, the devnet stage runs anvil, and what the runtime image runs: its ENTRYPOINT with
// `migrate`, then with its CMD (the API) until the HEALTHCHECK passes, then SIGTERM, which must end
// it with code 0 within 10 s. Usage: node .ci/image-check.mjs <postgres-url> <redis-url>
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import pg from "pg";

const [databaseBase, redisUrl] = process.argv.slice(2);
if (!databaseBase || !redisUrl) throw new Error("usage: node .ci/image-check.mjs <postgres-url> <redis-url>");
const repo = resolve(dirname(new URL(import.meta.url).pathname), "..");
const root = mkdtempSync(join(tmpdir(), "sg-image-"));
const say = (line) => console.log(`[image] ${line}`);

// Instructions, with continuation lines joined and comments dropped.
const instructions = readFileSync(join(repo, ".docker/Dockerfile"), "utf8")
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"))
  .map((l) => {
    const [op, ...rest] = l.split(/\s+/);
    return { op: op.toUpperCase(), args: rest.join(" ") };
  });

const stages = new Map();
let stage = null;
// Its own npm cache: the image's `npm cache clean` must not empty this machine's.
// The machine's extra certificate authorities go along: behind a TLS-inspecting proxy npm on Node 24
// trusts the registry only through them (Node 20 also takes npm's cafile).
const env = {
  PATH: `${join(root, "bin")}:${process.env.PATH}`,
  HOME: process.env.HOME,
  npm_config_cache: join(root, "npm-cache"),
  ...(process.env.NODE_EXTRA_CA_CERTS && { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }),
};
mkdirSync(join(root, "bin"));
mkdirSync(join(root, "shared"));
/** An absolute image path as a path here: /app is the stage's folder, /usr/local/bin the shared bin/, / the root. */
const here = (p) => {
  if (p.startsWith("/app")) return join(stage.dir, p.slice(4));
  if (p.startsWith("/usr/local/bin/")) return join(root, "bin", p.slice("/usr/local/bin/".length));
  if (p.startsWith("/")) return join(root, p);
  return join(stage.cwd, p);
};
const json = (s) => JSON.parse(s);

for (const { op, args } of instructions) {
  switch (op) {
    case "FROM": {
      const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.size}`;
      const base = stages.get(args.split(/\s+/)[0]);
      stage = { dir: join(root, name), cwd: join(root, name), image: base ? { ...base.image } : { entrypoint: [], cmd: [], healthcheck: null } };
      if (base) cpSync(base.dir, stage.dir, { recursive: true, verbatimSymlinks: true });
      mkdirSync(stage.dir, { recursive: true });
      if (base) stage.cwd = join(stage.dir, base.cwd.slice(base.dir.length));
      stages.set(name, stage);
      say(`stage ${name} (${args.split(/\s+/)[0]})`);
      break;
    }
    case "WORKDIR":
      stage.cwd = here(args);
      mkdirSync(stage.cwd, { recursive: true });
      break;
    case "ENV":
      for (const [, k, v] of args.matchAll(/(\w+)=(\S+)/g)) env[k] = v;
      break;
    case "COPY": {
      const parts = args.split(/\s+/);
      const from = parts[0].startsWith("--from=") ? stages.get(parts.shift().slice(7)) : null;
      const dest = parts.pop();
      for (const src of parts) {
        const source = from ? (src.startsWith("/app") ? join(from.dir, src.slice(4)) : join(from.dir, src)) : join(repo, src);
        const target = dest.endsWith("/") ? join(here(dest), src.split("/").pop()) : here(dest);
        cpSync(source, target, { recursive: true });
      }
      break;
    }
    case "RUN": {
      if (args.startsWith("apt-get")) {
        for (const pkg of args
          .match(/install\s+(?:-\S+\s+)*([^&]+)/)[1]
          .trim()
          .split(/\s+/)) {
          if (spawnSync("sh", ["-c", `command -v ${pkg}`]).status !== 0)
            throw new Error(`the image installs ${pkg}: install it here (apt-get install -y ${pkg})`);
        }
        break;
      }
      // chown is the daemon's part (there is no node user here); paths are this stage's.
      const script = args
        .replace(/&&\s*chown\s+[^&]+/g, "")
        .replace(/\/app\b/g, stage.dir)
        .replace(/\/shared\b/g, join(root, "shared"))
        .replace(/(^|\s)\/data\b/g, `$1${join(root, "data")}`);
      say(`RUN ${args}`);
      execFileSync("sh", ["-c", script], { cwd: stage.cwd, env, stdio: "inherit" });
      break;
    }
    case "ENTRYPOINT":
      stage.image.entrypoint = json(args).map((a) => (a.startsWith("/") ? here(a) : a));
      break;
    case "CMD":
      stage.image.cmd = json(args);
      break;
    case "HEALTHCHECK":
      stage.image.healthcheck = /CMD\s+(.*)$/.exec(args)[1];
      break;
    case "USER":
    case "EXPOSE":
      break;
    default:
      throw new Error(`image-check does not know ${op}`);
  }
}

// docker-compose.devnet.yml runs anvil from the devnet image; the runtime image has none of the tooling.
const runtime = stages.get("runtime");
const devnet = stages.get("devnet");
if (!runtime || !devnet) throw new Error("the Dockerfile needs a runtime and a devnet stage");
const anvil = /entrypoint:\s*\["([^"]+anvil)"\]/.exec(readFileSync(join(repo, "docker-compose.devnet.yml"), "utf8"))?.[1];
if (!anvil || spawnSync(join(devnet.cwd, anvil), ["--version"]).status !== 0)
  throw new Error(`docker-compose.devnet.yml's anvil (${anvil}) does not run from the devnet image`);
say(`anvil from the devnet image: ${anvil}`);
for (const tool of ["@foundry-rs", "prisma", "typescript", "vitest", "solc", "@prisma/studio-core"]) {
  if (existsSync(join(runtime.cwd, "node_modules", tool)))
    throw new Error(`the runtime image holds ${tool}: it belongs in devDependencies or the devnet stage`);
}
const size = (path) => execFileSync("du", ["-sm", path]).toString().split("\t")[0];
say(`runtime image: node_modules ${size(join(runtime.cwd, "node_modules"))} MB, the app ${size(runtime.dir)} MB, on Node ${process.version}`);

// What the runtime image runs, from its /app.
stage = runtime;
const { entrypoint, cmd, healthcheck } = runtime.image;
const admin = new pg.Client({ connectionString: databaseBase });
await admin.connect();
const dbName = `sg_image_${process.pid}`;
await admin.query(`CREATE DATABASE ${dbName}`);
const databaseUrl = Object.assign(new URL(databaseBase), { pathname: `/${dbName}` }).toString();
const port = String(20_000 + (process.pid % 20_000));
const runEnv = { ...env, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, PORT: port, HOST: "127.0.0.1", DATA_DIR: join(root, "shared", "data") };
const [program, ...programArgs] = entrypoint;
try {
  say(`${entrypoint.join(" ")} migrate`);
  execFileSync(program, [...programArgs, "migrate"], { cwd: stage.cwd, env: runEnv, stdio: "inherit" });

  say(`${entrypoint.join(" ")} ${cmd.join(" ")}`);
  const api = spawn(program, [...programArgs, ...cmd], { cwd: stage.cwd, env: runEnv, stdio: ["ignore", "inherit", "inherit"] });
  const exited = new Promise((r) => api.once("exit", (code) => r(code)));
  let healthy = false;
  for (let i = 0; i < 60 && !healthy; i++) {
    await new Promise((r) => setTimeout(r, 500));
    healthy = spawnSync("sh", ["-c", healthcheck], { cwd: stage.cwd, env: runEnv }).status === 0;
  }
  if (!healthy) throw new Error("the HEALTHCHECK never passed");
  say("HEALTHCHECK passes");
  // As `docker compose exec api-1 stablegate …` runs it: the entrypoint is also the image's command.
  const created = JSON.parse(execFileSync("stablegate", ["merchant", "create", "--name", "Image", "--json"], { cwd: stage.cwd, env: runEnv }).toString());
  if (!created.merchant?.id) throw new Error("`stablegate merchant create` in the image did not create a merchant");
  say(`stablegate merchant create: ${created.merchant.id}`);
  const stopping = Date.now();
  api.kill("SIGTERM");
  const code = await exited;
  if (code !== 0 || Date.now() - stopping > 10_000) throw new Error(`SIGTERM: exit code ${code} after ${Date.now() - stopping} ms`);
  say(`SIGTERM: exit 0 in ${Date.now() - stopping} ms`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  rmSync(root, { recursive: true, force: true });
}
