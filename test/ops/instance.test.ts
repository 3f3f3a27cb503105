import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordInstance, runningInstance, runningInstanceUrl } from "../../src/instance.js";

const fresh = () => mkdtempSync(join(tmpdir(), "instance-"));

describe("the running instance's address", () => {
  it("is what npm start recorded, until it stops", () => {
    const dataDir = fresh();
    const config = { publicUrl: "http://localhost:4000", publicUrlSet: false, dataDir };
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
    const forget = recordInstance(dataDir, "http://127.0.0.1:4123");
    expect(runningInstanceUrl(config)).toBe("http://127.0.0.1:4123");
    forget();
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
  });

  it("is PUBLIC_URL or PORT when the environment sets one", () => {
    const dataDir = fresh();
    recordInstance(dataDir, "http://127.0.0.1:4123");
    expect(runningInstanceUrl({ publicUrl: "http://localhost:5000", publicUrlSet: true, dataDir })).toBe("http://localhost:5000");
  });

  it("ignores the record of a process that is gone, and a damaged record", () => {
    const dataDir = fresh();
    const config = { publicUrl: "http://localhost:4000", publicUrlSet: false, dataDir };
    writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:4999", pid: 2 ** 22 + 1 }));
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
    writeFileSync(join(dataDir, "instance.json"), "{not json");
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
  });

  it("says which setting chose it", () => {
    const dataDir = fresh();
    const at = (publicUrl: string, publicUrlSet: boolean) => runningInstance({ publicUrl, publicUrlSet, dataDir });
    expect(at("https://pay.example.com", true)).toEqual({ url: "https://pay.example.com", source: "PUBLIC_URL" });
    expect(at("http://localhost:3000", true)).toEqual({ url: "http://localhost:3000", source: "PORT" });
    expect(at("http://localhost:4000", false)).toEqual({ url: "http://localhost:4000", source: "default" });
    recordInstance(dataDir, "http://127.0.0.1:4123");
    expect(at("http://localhost:4000", false)).toEqual({ url: "http://127.0.0.1:4123", source: "record" });
  });
});
