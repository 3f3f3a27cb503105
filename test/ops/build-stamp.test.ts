// `npm start` builds only what changed: .config/build.mjs keeps a fingerprint of each part's sources
// in a stamp and skips a part whose sources and outputs are as its last build left them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { build, type BuildPart, PARTS } from "../../.config/build.mjs";

const base = mkdtempSync(join(tmpdir(), "sg-build-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A part that copies its one source file to its output, counting its builds. */
function part(name: string, builds: string[], fail = { now: false }): BuildPart {
  return {
    name,
    inputs: [`${name}-src`],
    skip: [`${name}-src/out`],
    outputs: [`out/${name}.txt`],
    build: [
      () => {
        if (fail.now) throw new Error(`${name} failed`);
        builds.push(name);
        writeFileSync(join(base, "out", `${name}.txt`), readFileSync(join(base, `${name}-src`, "a.txt")));
      },
    ],
  };
}

describe("the build stamp", () => {
  it("skips an unchanged tree, rebuilds only the part whose source changed or whose output is gone, and redoes a failed part", () => {
    for (const name of ["one", "two"]) {
      mkdirSync(join(base, `${name}-src`, "out"), { recursive: true });
      writeFileSync(join(base, `${name}-src`, "a.txt"), `${name} v1`);
    }
    mkdirSync(join(base, "out"), { recursive: true });
    const builds: string[] = [];
    const fail = { now: false };
    const parts = [part("one", builds), part("two", builds, fail)];
    const options = { parts, base, stampFile: join(base, "out", ".build-stamp.json"), log: () => {} };

    expect(build(options)).toEqual(["one", "two"]);
    expect(build(options)).toEqual([]);

    writeFileSync(join(base, "two-src", "a.txt"), "two v2");
    expect(build(options)).toEqual(["two"]);
    expect(readFileSync(join(base, "out", "two.txt"), "utf8")).toBe("two v2");

    // A skipped directory (a part's own output inside its sources) changes nothing.
    writeFileSync(join(base, "one-src", "out", "generated.txt"), "x");
    expect(build(options)).toEqual([]);

    rmSync(join(base, "out", "one.txt"));
    expect(build(options)).toEqual(["one"]);

    writeFileSync(join(base, "two-src", "a.txt"), "two v3");
    fail.now = true;
    expect(() => build(options)).toThrow(/two failed/);
    fail.now = false;
    expect(build(options)).toEqual(["two"]);

    expect(build({ ...options, all: true })).toEqual(["one", "two"]);
    expect(builds).toEqual(["one", "two", "two", "one", "two", "one", "two"]);
  });

  it("is what npm start, npm run worker, npm run migrate and an install run; npm run build builds everything", () => {
    const { scripts } = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    for (const script of ["prestart", "preworker", "prepare"]) expect(scripts[script]).toBe("node .config/build.mjs");
    expect(scripts.migrate).toBe("node .config/build.mjs && node dist/cli/main.js migrate");
    expect(scripts.build).toBe("node .config/build.mjs --all");
    // The server's part makes the embedded database's template from the migrations, so a changed migration remakes it.
    const server = PARTS.find((p) => p.name === "server")!;
    expect(server.inputs).toContain("prisma/migrations");
    expect(server.outputs).toContain("dist/db/template.json");
    expect(server.outputs).toContain("dist/db/template.tar.gz");
  });
});
