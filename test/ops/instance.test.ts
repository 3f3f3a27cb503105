import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { instanceUrl, recordInstance, runningInstance, runningInstanceUrl } from "../../src/instance.js";

const fresh = () => mkdtempSync(join(tmpdir(), "instance-"));

describe("the running instance's address", () => {
  it("is what npm start recorded, until it stops", () => {
    const dataDir = fresh();
    const config = { publicUrl: "http://localhost:4000", publicUrlGiven: false, portGiven: false, dataDir };
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
    const forget = recordInstance(dataDir, "http://127.0.0.1:4123");
    expect(runningInstanceUrl(config)).toBe("http://127.0.0.1:4123");
    forget();
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
  });

  it("is PUBLIC_URL or PORT when the environment sets one", () => {
    const dataDir = fresh();
    recordInstance(dataDir, "http://127.0.0.1:4123");
    expect(runningInstanceUrl({ publicUrl: "http://localhost:5000", publicUrlGiven: true, portGiven: false, dataDir })).toBe("http://localhost:5000");
  });

  it("is recorded as where the server listens unless PUBLIC_URL was given (PORT=0 names no port), whole", () => {
    // PORT=0 alone: PUBLIC_URL derived from it would say port 0.
    const portZero = { publicUrl: "http://localhost:0", publicUrlGiven: false };
    expect(instanceUrl(portZero, "http://0.0.0.0:4123")).toBe("http://localhost:4123");
    expect(instanceUrl(portZero, "http://[::]:4123")).toBe("http://localhost:4123");
    expect(instanceUrl(portZero, "http://127.0.0.1:4123")).toBe("http://127.0.0.1:4123");
    expect(instanceUrl({ publicUrl: "https://pay.example.com", publicUrlGiven: true }, "http://0.0.0.0:4123")).toBe("https://pay.example.com");
    const dataDir = fresh();
    recordInstance(dataDir, "http://127.0.0.1:4123");
    expect(readdirSync(dataDir)).toEqual(["instance.json"]);
  });

  it("ignores the record of a process that is gone, and a damaged record", () => {
    const dataDir = fresh();
    const config = { publicUrl: "http://localhost:4000", publicUrlGiven: false, portGiven: false, dataDir };
    writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:4999", pid: 2 ** 22 + 1 }));
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
    writeFileSync(join(dataDir, "instance.json"), "{not json");
    expect(runningInstanceUrl(config)).toBe("http://localhost:4000");
  });

  it("says which setting chose it", () => {
    const dataDir = fresh();
    const at = (publicUrl: string, publicUrlGiven: boolean, portGiven: boolean) => runningInstance({ publicUrl, publicUrlGiven, portGiven, dataDir });
    expect(at("https://pay.example.com", true, false)).toEqual({ url: "https://pay.example.com", source: "PUBLIC_URL" });
    expect(at("http://localhost:3000", true, true)).toEqual({ url: "http://localhost:3000", source: "PUBLIC_URL" });
    expect(at("http://localhost:3000", false, true)).toEqual({ url: "http://localhost:3000", source: "PORT" });
    expect(at("http://localhost:4000", false, false)).toEqual({ url: "http://localhost:4000", source: "default" });
    recordInstance(dataDir, "http://127.0.0.1:4123");
    expect(at("http://localhost:4000", false, false)).toEqual({ url: "http://127.0.0.1:4123", source: "record" });
  });
});
