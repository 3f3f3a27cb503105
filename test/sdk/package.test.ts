// The SDK as its own package (src/sdk/package.json, `@stablegate/sdk`): it imports nothing of the
// server (so its tarball carries only its own files and depends on nothing), its manifest and the
// root's `stablegate/sdk` point at the same build, and its webhook verification is Standard
// Webhooks: it accepts what the official `standardwebhooks` package and the service sign, and
// refuses what they refuse. (.ci/sdk-pack-check.mjs installs the packed SDK and uses it.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { API_VERSION as SERVED_VERSION } from "../../src/rest/version.js";
import { API_VERSION, Stablegate, WebhookVerificationError } from "../../src/sdk/index.js";
import { newWebhookSecret, webhookHeaders } from "../../src/webhooks/signature.js";

const root = join(import.meta.dirname, "../..");
const json = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));

describe("the SDK package", () => {
  it("imports only its own files, node: modules and the generated OpenAPI types (as types)", () => {
    const dir = join(root, "src/sdk");
    const imports = readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .flatMap((file) => {
        const source = readFileSync(join(dir, file), "utf8");
        return ts.preProcessFile(source, true, true).importedFiles.map(({ fileName }) => ({ file, fileName, source }));
      });
    expect(imports.length).toBeGreaterThan(2);
    const outside = imports.filter(({ fileName }) => !fileName.startsWith("./") && !fileName.startsWith("node:") && fileName !== "../generated/openapi.js");
    expect(outside.map(({ file, fileName }) => `${file} -> ${fileName}`)).toEqual([]);
    for (const { source } of imports.filter(({ fileName }) => fileName === "../generated/openapi.js")) {
      expect(source).toMatch(/^import type \{[^}]+\} from "\.\.\/generated\/openapi\.js";$/m);
    }
  });

  it("depends on nothing, has the root's version, and the root's stablegate/sdk is the same build", () => {
    const sdk = json("src/sdk/package.json");
    const pkg = json("package.json");
    expect(sdk).toMatchObject({ name: "@stablegate/sdk", version: pkg.version, type: "module", files: ["dist"] });
    // No scripts: the tarball ships dist/ alone, so a script (a prepare running build.mjs) would name a file it lacks.
    expect(sdk.scripts).toBeUndefined();
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) expect(sdk[field]).toBeUndefined();
    // TypeScript takes the first condition that matches: `types` must come first in each.
    for (const condition of ["import", "require"]) expect(Object.keys(sdk.exports["."][condition])).toEqual(["types", "default"]);
    // node10 reads main and types (the CommonJS build), as it ignores exports.
    expect([sdk.main, sdk.types]).toEqual([sdk.exports["."].require.default, sdk.exports["."].require.types]);

    const inRoot = (path: string) => `./src/sdk/${path.slice(2)}`;
    const exported = sdk.exports["."];
    expect(pkg.exports["./sdk"]).toEqual({
      import: { types: inRoot(exported.import.types), default: inRoot(exported.import.default) },
      require: { types: inRoot(exported.require.types), default: inRoot(exported.require.default) },
    });
    expect(pkg.typesVersions).toEqual({ "*": { sdk: [inRoot(exported.require.types)] } });
    expect(pkg.files).toContain("src/sdk/dist");
    expect(pkg.scripts.prepare).toBe("node .config/build.mjs");
  });

  it("asks for the API version the service speaks (its types are generated from that service's document)", () => {
    expect(API_VERSION).toBe(SERVED_VERSION);
  });
});

describe("webhooks.verify is Standard Webhooks", () => {
  const sdk = new Stablegate({ apiKey: "sk_test_x", baseUrl: "http://127.0.0.1:1" });
  const secret = newWebhookSecret();
  const body = JSON.stringify({ id: "evt_1", type: "customer.created", timestamp: new Date().toISOString(), livemode: false, data: { id: "cus_1" } });
  const now = new Date();

  it("accepts a delivery signed by the official standardwebhooks package, whatever the headers' case", () => {
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign("msg_1", now, body),
    };
    expect(sdk.webhooks.verify(body, headers, secret)).toEqual(JSON.parse(body));
    const capitalized = {
      "Webhook-Id": headers["webhook-id"],
      "Webhook-Timestamp": headers["webhook-timestamp"],
      "Webhook-Signature": headers["webhook-signature"],
    };
    expect(sdk.webhooks.verify(body, capitalized, secret)).toEqual(JSON.parse(body));
  });

  it("accepts what the service signs, with either secret during a rotation; the official package agrees", () => {
    const other = newWebhookSecret();
    const headers = webhookHeaders("msg_2", Math.floor(now.getTime() / 1000), body, [other, secret]);
    expect(sdk.webhooks.verify(body, headers, secret)).toEqual(JSON.parse(body));
    expect(sdk.webhooks.verify(body, headers, other)).toEqual(JSON.parse(body));
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("refuses what the official package refuses: a changed body, another secret, an old timestamp, missing headers", () => {
    const timestamp = Math.floor(now.getTime() / 1000);
    const headers = webhookHeaders("msg_3", timestamp, body, [secret]);
    const cases: [string, Record<string, string>, string][] = [
      [body.replace("cus_1", "cus_2"), headers, secret],
      [body, headers, newWebhookSecret()],
      [body, webhookHeaders("msg_3", timestamp - 600, body, [secret]), secret],
      [body, { "webhook-id": "msg_3", "webhook-timestamp": String(timestamp) }, secret],
    ];
    for (const [b, h, s] of cases) {
      expect(() => sdk.webhooks.verify(b, h, s)).toThrow(WebhookVerificationError);
      expect(() => new Webhook(s).verify(b, h)).toThrow();
    }
  });
});
