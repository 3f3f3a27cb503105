// GET /docs: the API reference, drawn in the browser by Swagger UI (the swagger-ui-dist package,
// served from this process: no CDN) from /v1/openapi.json. The page has no inline script, so its
// CSP lets scripts come from this origin only; "Try it out" calls this API with the key you enter.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { gzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { securityHeaders } from "../http/security-headers.js";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stablegate API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="stylesheet" href="/docs/docs.css">
</head>
<body>
<main id="docs"></main>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// An error body's docUrl names its code's entry in the introduction (#error-…): the page goes there
// once it is drawn.
const INIT = `const entry = location.hash.startsWith("#error-") ? decodeURIComponent(location.hash.slice(1)) : null;
window.ui = SwaggerUIBundle({
  url: "/v1/openapi.json",
  dom_id: "#docs",
  // Deep links would put a link inside each operation's button (a control in a control, which
  // keyboards and screen readers cannot use): operations open by their button alone.
  deepLinking: false,
  tryItOutEnabled: false,
  onComplete: () => entry && document.getElementById(entry)?.scrollIntoView(),
});
`;

// Swagger UI's own colours, where they are too faint to read (WCAG AA, 4.5:1): darker badges and
// links. The servers picker is hidden: there is one server, and "Try it out" is off.
const CSS = `.swagger-ui .info .title small pre.version { background: #4b5563; }
.swagger-ui .info .title small.version-stamp, .swagger-ui .info .title small.version-stamp pre.version { background: #3f6212; }
.swagger-ui .info .base-url, .swagger-ui .info a.link, .swagger-ui .info a, .swagger-ui a.nostyle, .swagger-ui .url { color: #1d4ed8; }
.swagger-ui .btn.authorize { color: #047857; border-color: #047857; }
.swagger-ui .btn.authorize svg { fill: #047857; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #047857; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1d4ed8; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b42318; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0f766e; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #b45309; }
.swagger-ui .opblock.opblock-head .opblock-summary-method, .swagger-ui .opblock.opblock-options .opblock-summary-method { background: #6d28d9; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #374151; }
.swagger-ui .scheme-container { display: none; }
.swagger-ui .parameter__in { color: #4b5563; }
.swagger-ui pre.microlight, .swagger-ui .microlight { background: #111827 !important; white-space: pre-wrap !important; overflow-wrap: anywhere; max-height: none !important; overflow: visible !important; }
.swagger-ui .renderedMarkdown * { overflow-wrap: anywhere; }
.swagger-ui .renderedMarkdown pre { white-space: pre-wrap; }
.swagger-ui .responses-table td, .swagger-ui .responses-inner { overflow-wrap: anywhere; }
@media (max-width: 600px) { .swagger-ui .response-col_links { display: none; } }
`;

/** A static answer, gzipped once when first asked for. */
class Asset {
  private gzipped: Buffer | null = null;

  constructor(
    private readonly type: string,
    private readonly load: () => Buffer,
  ) {}

  send(req: FastifyRequest, reply: FastifyReply): FastifyReply {
    reply.type(this.type).header("Cache-Control", "public, max-age=3600").header("Vary", "Accept-Encoding");
    if (!/\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) return reply.send(this.load());
    this.gzipped ??= gzipSync(this.load());
    return reply.header("Content-Encoding", "gzip").send(this.gzipped);
  }
}

/** Registers /docs and its assets. */
export function docsRoutes(server: FastifyInstance, publicUrl: string): void {
  const dist = (file: string) => () => readFileSync(createRequire(import.meta.url).resolve(`swagger-ui-dist/${file}`));
  const assets: Record<string, Asset> = {
    "/docs/swagger-ui-bundle.js": new Asset("text/javascript; charset=utf-8", dist("swagger-ui-bundle.js")),
    "/docs/swagger-ui.css": new Asset("text/css; charset=utf-8", dist("swagger-ui.css")),
    "/docs/init.js": new Asset("text/javascript; charset=utf-8", () => Buffer.from(INIT)),
    "/docs/docs.css": new Asset("text/css; charset=utf-8", () => Buffer.from(CSS)),
    "/docs": new Asset("text/html; charset=utf-8", () => Buffer.from(PAGE)),
  };
  // The page connects to the public address the document names as its server ("Try it out").
  const headers = securityHeaders({ script: { connectTo: [new URL(publicUrl).origin] }, frameAncestors: [], referrer: "no-referrer" });
  server.register(async (scope) => {
    scope.addHook("onSend", async (_req, reply) => {
      reply.headers(headers);
    });
    // Public pages count against the address's budget, like the hosted payment page.
    const open = { config: { group: "read", auth: "public" } } as const;
    for (const [url, asset] of Object.entries(assets)) scope.get(url, open, async (req, reply) => asset.send(req, reply));
  });
}
