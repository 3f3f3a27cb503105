// CI: GET /v1/openapi.json of the built service (`npm run build` first), linted with Spectral
// (.config/spectral.yaml: spectral:oas) and Redocly (.config/redocly.yaml: recommended), where any
// error or warning fails; then a client typed by openapi-typescript from it (by hand and with
// openapi-fetch) must compile with no casts under strict and exactOptionalPropertyTypes
// (.ci/openapi-client.ts is that client).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { openApiDocument } from "../.config/openapi-document.mjs";

const dir = mkdtempSync(join(tmpdir(), "stablegate-openapi-"));
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };
const failures = [];

/** Runs a command of the project's own node_modules; its output is parsed, so it must be JSON. */
function run(args) {
  const result = spawnSync("npx", ["--no-install", ...args], { encoding: "utf8", env, maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

/** Records a failure when `counts` has any error or warning; prints the counts and the problems. */
function judge(tool, counts, problems) {
  console.log(`${tool}: ${counts.errors} errors, ${counts.warnings} warnings`);
  for (const p of problems) console.log(`  ${p}`);
  if (counts.errors + counts.warnings > 0) failures.push(tool);
}

try {
  const doc = join(dir, "openapi.json");
  const document = await openApiDocument();
  writeFileSync(doc, JSON.stringify(document, null, 2));

  const spectral = run(["spectral", "lint", "--ruleset", ".config/spectral.yaml", "--fail-severity=warn", "--format=json", "--quiet", doc]);
  const results = JSON.parse(spectral.stdout || "[]");
  const severity = (n) => results.filter((r) => r.severity === n).length;
  judge(
    "Spectral (spectral:oas)",
    { errors: severity(0), warnings: severity(1) },
    results.map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`),
  );
  if (spectral.status !== 0 && results.length === 0) failures.push(`Spectral exited ${spectral.status}: ${spectral.stderr}`);

  const redocly = run(["redocly", "lint", "--config", ".config/redocly.yaml", "--format=json", doc]);
  const report = JSON.parse(redocly.stdout);
  judge(
    "Redocly (recommended)",
    report.totals,
    report.problems.map((p) => `${p.ruleId} at ${p.location.map((l) => l.pointer).join(", ")}: ${p.message}`),
  );

  // The client: types generated as an integrator would (openapi-typescript's defaults), used without casts.
  writeFileSync(join(dir, "openapi.ts"), astToString(await openapiTS(document)));
  copyFileSync(".ci/openapi-client.ts", join(dir, "client.ts"));
  // The client imports openapi-fetch as an integrator's project would: from its node_modules (ours).
  symlinkSync(join(process.cwd(), "node_modules"), join(dir, "node_modules"));
  const compilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    target: "ES2022",
    lib: ["ES2022", "DOM"],
    module: "ESNext",
    moduleResolution: "Bundler",
    allowImportingTsExtensions: false,
    types: [],
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["client.ts"] }));
  const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", join(dir, "tsconfig.json")], { encoding: "utf8" });
  console.log(`openapi-typescript and openapi-fetch client under strict and exactOptionalPropertyTypes: ${tsc.status === 0 ? "compiles" : "does not compile"}`);
  if (tsc.status !== 0) {
    console.log(tsc.stdout, tsc.stderr);
    failures.push("the generated client");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (failures.length > 0) {
  console.error(`OpenAPI checks failed: ${failures.join("; ")}`);
  process.exit(1);
}
