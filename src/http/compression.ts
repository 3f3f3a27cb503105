// Compression of what browsers load (the hosted pages, the dashboard, their scripts and styles):
// brotli when the client takes it, gzip otherwise, the plain bytes when it takes neither, always
// with `Vary: Accept-Encoding` so that a cache keeps one copy per encoding. Static assets are
// compressed once, when loaded, at the highest levels; pages (HTML drawn per request) at a fast
// level, and only above MIN_COMPRESSED_BYTES (below it the headers cost more than they save). Only
// text is compressed: PDFs and images are compressed already, and an answer that already carries a
// Content-Encoding (set by a route, or by a proxy in front of us) is left as it is.
import { promisify } from "node:util";
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** An encoding this service answers in. */
export type Encoding = "br" | "gzip" | "identity";

/** Pages smaller than this go uncompressed: the saving would not pay for the work. */
export const MIN_COMPRESSED_BYTES = 1024;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * The encoding to answer a request with, from its Accept-Encoding: br if accepted, else gzip, else
 * identity. A coding listed with q=0 is refused; `*` stands for any coding not listed.
 */
export function negotiate(acceptEncoding: string | string[] | undefined): Encoding {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(",") : (acceptEncoding ?? "");
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (!coding) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(coding, Number.isFinite(weight) ? weight : 0);
  }
  const accepts = (coding: string) => (weights.get(coding) ?? weights.get("*") ?? 0) > 0;
  if (accepts("br")) return "br";
  if (accepts("gzip") || accepts("x-gzip")) return "gzip";
  return "identity";
}

/** A static body in each encoding, compressed once; an encoding that would not be smaller is left out. */
export class CompressedAsset {
  private readonly encoded: Partial<Record<Exclude<Encoding, "identity">, Buffer>> = {};

  constructor(
    /** The body as it is. */
    readonly plain: Buffer,
    /** Its Content-Type. */
    readonly type: string,
  ) {
    const br = brotliCompressSync(plain, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: plain.length } });
    const gz = gzipSync(plain, { level: 9 });
    if (br.length < plain.length) this.encoded.br = br;
    if (gz.length < plain.length) this.encoded.gzip = gz;
  }

  /** The bytes sent for `encoding` (the plain ones when that encoding was left out). */
  bytes(encoding: Encoding): { encoding: Encoding; body: Buffer } {
    const body = encoding === "identity" ? undefined : this.encoded[encoding];
    return body ? { encoding, body } : { encoding: "identity", body: this.plain };
  }

  /** Answers `req` with the asset in the encoding it accepts (the caller sets caching and the other headers). */
  send(req: FastifyRequest, reply: FastifyReply): FastifyReply {
    const { encoding, body } = this.bytes(negotiate(req.headers["accept-encoding"]));
    varyOnEncoding(reply.type(this.type));
    if (encoding !== "identity") reply.header("Content-Encoding", encoding);
    return reply.send(body);
  }
}

/** Whether a Content-Type names a page drawn per request (compressed per response). */
const PAGE_TYPE = /^text\/html\b/i;

/**
 * Compresses, in `scope`, every HTML answer of at least MIN_COMPRESSED_BYTES in the encoding its
 * request accepts (a fast level: it is done per response). Other types pass untouched.
 */
export function compressPages(scope: FastifyInstance): void {
  scope.addHook("onSend", async (req, reply, payload) => {
    if (typeof payload !== "string" && !Buffer.isBuffer(payload)) return payload;
    if (!PAGE_TYPE.test(String(reply.getHeader("content-type") ?? "")) || reply.hasHeader("content-encoding")) return payload;
    varyOnEncoding(reply);
    const plain = typeof payload === "string" ? Buffer.from(payload) : payload;
    const encoding = negotiate(req.headers["accept-encoding"]);
    if (encoding === "identity" || plain.length < MIN_COMPRESSED_BYTES) return payload;
    const body =
      encoding === "br"
        ? await brotliAsync(plain, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: plain.length } })
        : await gzipAsync(plain, { level: 6 });
    // A length a route set would be the plain body's.
    reply.removeHeader("content-length");
    reply.header("Content-Encoding", encoding);
    return body;
  });
}

/** Adds Accept-Encoding to the answer's Vary, keeping what is there (CORS varies on Origin). */
function varyOnEncoding(reply: FastifyReply): FastifyReply {
  const current = String(reply.getHeader("vary") ?? "");
  if (/\baccept-encoding\b/i.test(current)) return reply;
  return reply.header("Vary", current ? `${current}, Accept-Encoding` : "Accept-Encoding");
}
