// Compression of the pages and assets browsers load (src/http/compression.ts): which encoding each
// Accept-Encoding gets, Vary, the size under which a page goes plain, what is never compressed, and
// the service's icon (src/http/favicon.ts).
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CompressedAsset, compressPages, MIN_COMPRESSED_BYTES, negotiate } from "../../src/http/compression.js";
import { faviconRoutes } from "../../src/http/favicon.js";

describe("negotiate", () => {
  it("prefers br, falls back to gzip, else identity; q=0 refuses and * stands for the rest", () => {
    expect(negotiate("gzip, deflate, br")).toBe("br");
    expect(negotiate("br;q=0.1, gzip;q=1")).toBe("br");
    expect(negotiate("gzip, deflate")).toBe("gzip");
    expect(negotiate("x-gzip")).toBe("gzip");
    expect(negotiate("br;q=0, gzip")).toBe("gzip");
    expect(negotiate("br;q=0, gzip;q=0")).toBe("identity");
    expect(negotiate("*")).toBe("br");
    expect(negotiate("*;q=0")).toBe("identity");
    expect(negotiate("br;q=0, *")).toBe("gzip");
    expect(negotiate("deflate")).toBe("identity");
    expect(negotiate("identity")).toBe("identity");
    expect(negotiate("")).toBe("identity");
    expect(negotiate(undefined)).toBe("identity");
    expect(negotiate(["gzip", "br"])).toBe("br");
    expect(negotiate("BR;Q=0.5")).toBe("br");
    expect(negotiate("gzip;q=nonsense")).toBe("identity");
  });
});

const BIG_PAGE = `<!doctype html><p>${"Pay 25.00 USDC to Mug Shop. ".repeat(200)}</p>`;
const SMALL_PAGE = "<!doctype html><p>Hello</p>";
const SCRIPT = Buffer.from(`console.log(${JSON.stringify("wallet ".repeat(500))});`);
const PDF = Buffer.from(`%PDF-1.4 ${"x".repeat(5000)}`);

let app: FastifyInstance;
beforeAll(async () => {
  app = Fastify();
  const script = new CompressedAsset(SCRIPT, "text/javascript; charset=utf-8");
  const tiny = new CompressedAsset(Buffer.from("x"), "text/plain");
  faviconRoutes(app);
  await app.register(async (scope) => {
    compressPages(scope);
    scope.get("/big", async (_req, reply) => reply.type("text/html; charset=utf-8").send(BIG_PAGE));
    scope.get("/small", async (_req, reply) => reply.type("text/html; charset=utf-8").send(SMALL_PAGE));
    scope.get("/cors", async (_req, reply) => reply.header("Vary", "Origin").type("text/html; charset=utf-8").send(BIG_PAGE));
    scope.get("/proxied", async (_req, reply) => reply.header("Content-Encoding", "gzip").type("text/html; charset=utf-8").send(BIG_PAGE));
    scope.get("/pdf", async (_req, reply) => reply.type("application/pdf").send(PDF));
    scope.get("/json", async () => ({ page: BIG_PAGE }));
    scope.get("/script.js", async (req, reply) => script.send(req, reply));
    scope.get("/tiny", async (req, reply) => tiny.send(req, reply));
  });
  await app.ready();
});
afterAll(() => app?.close());

const get = (url: string, acceptEncoding?: string) => app.inject({ url, headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } });

describe("pages compressed per response", () => {
  it("sends br, gzip or identity as accepted, always with Vary, and the same page in each", async () => {
    const br = await get("/big", "gzip, deflate, br");
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toBe("Accept-Encoding");
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(BIG_PAGE);
    expect(Number(br.headers["content-length"])).toBe(br.rawPayload.length);
    expect(br.rawPayload.length).toBeLessThan(BIG_PAGE.length / 10);

    const gz = await get("/big", "gzip");
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers.vary).toBe("Accept-Encoding");
    expect(gunzipSync(gz.rawPayload).toString()).toBe(BIG_PAGE);

    for (const header of [undefined, "identity", "deflate", "br;q=0, gzip;q=0"]) {
      const plain = await get("/big", header);
      expect(plain.headers["content-encoding"], header).toBeUndefined();
      expect(plain.headers.vary).toBe("Accept-Encoding");
      expect(plain.payload).toBe(BIG_PAGE);
    }
  });

  it(`leaves a page under ${MIN_COMPRESSED_BYTES} bytes plain (still varying), and keeps a route's own Vary`, async () => {
    const small = await get("/small", "br");
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(small.headers.vary).toBe("Accept-Encoding");
    expect(small.payload).toBe(SMALL_PAGE);
    expect((await get("/cors", "br")).headers.vary).toBe("Origin, Accept-Encoding");
  });

  it("never compresses twice, nor what is not a page (PDF, JSON)", async () => {
    const proxied = await get("/proxied", "br");
    expect(proxied.headers["content-encoding"]).toBe("gzip");
    expect(proxied.payload).toBe(BIG_PAGE);
    const pdf = await get("/pdf", "br, gzip");
    expect(pdf.headers["content-encoding"]).toBeUndefined();
    expect(pdf.rawPayload.equals(PDF)).toBe(true);
    expect((await get("/json", "br")).headers["content-encoding"]).toBeUndefined();
  });
});

describe("static assets compressed once", () => {
  it("sends the precompressed bytes of the accepted encoding, with its type and Vary", async () => {
    const br = await get("/script.js", "br, gzip");
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(br.headers.vary).toBe("Accept-Encoding");
    expect(brotliDecompressSync(br.rawPayload).equals(SCRIPT)).toBe(true);
    const gz = await get("/script.js", "gzip");
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.rawPayload).equals(SCRIPT)).toBe(true);
    const plain = await get("/script.js");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.rawPayload.equals(SCRIPT)).toBe(true);
  });

  it("the same bytes every time (compressed at load, not per request)", async () => {
    const asset = new CompressedAsset(SCRIPT, "text/javascript");
    expect(asset.bytes("br").body).toBe(asset.bytes("br").body);
    expect(asset.bytes("gzip").body).toBe(asset.bytes("gzip").body);
  });

  it("sends plain what compression would make bigger", async () => {
    const tiny = await get("/tiny", "br, gzip");
    expect(tiny.headers["content-encoding"]).toBeUndefined();
    expect(tiny.payload).toBe("x");
  });
});

describe("favicon", () => {
  it("answers /favicon.svg and /favicon.ico with the SVG icon, cached for a week", async () => {
    for (const url of ["/favicon.svg", "/favicon.ico"]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"]).toBe("image/svg+xml");
      expect(res.headers["cache-control"]).toBe("public, max-age=604800");
      expect(res.payload).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(res.rawPayload.length).toBeLessThan(1024);
    }
  });
});
