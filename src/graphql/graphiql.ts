// GraphiQL (outside production, at GET /graphql for a browser): served from this process, with no
// CDN, so that it works offline. The code is @graphql-yoga/render-graphiql's bundle (the GraphiQL of
// the graphql-yoga release we run), whose strings this module serves as files under /graphiql/: the
// page has no inline script, and its policy lets scripts, workers and connections come from this
// origin only. The editor (Monaco) writes styles at run time and its fonts are data: URLs: the
// policy allows those (securityHeaders' `codeEditor`).
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { GraphiQLOptions } from "graphql-yoga";
import { FAVICON_LINK } from "../http/favicon.js";
import { securityHeaders } from "../http/security-headers.js";

/** Where the page's files are. */
export const GRAPHIQL_ASSETS = "/graphiql";

/** The headers of the page and its files. */
export const GRAPHIQL_HEADERS = securityHeaders({ script: { connectTo: [] }, frameAncestors: [], referrer: "same-origin", codeEditor: true });

/** The bundle's strings (about 8 MB): read when GraphiQL is first asked for, never in production. */
type Bundle = typeof import("@graphql-yoga/render-graphiql/graphiql");

// Monaco asks for a worker by label; each is a file here. Set before the bundle runs, which reads it.
const START = `self.MonacoEnvironment = {
  globalAPI: false,
  getWorkerUrl: (_moduleId, label) => "${GRAPHIQL_ASSETS}/" + ({ editorWorkerService: "editor", json: "json", graphql: "graphql" })[label] + ".worker.js",
};
addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("root");
  YogaGraphiQL.renderYogaGraphiQL(root, JSON.parse(root.dataset.options));
});
`;

/** The files of the page: their type and what of the bundle they hold. */
const FILES: Record<string, { type: string; body: (bundle: Bundle) => string }> = {
  "start.js": { type: "text/javascript; charset=utf-8", body: () => START },
  "graphiql.js": { type: "text/javascript; charset=utf-8", body: (b) => b.js },
  "graphiql.css": { type: "text/css; charset=utf-8", body: (b) => b.css },
  "editor.worker.js": { type: "text/javascript; charset=utf-8", body: (b) => b.editorWorkerService },
  "json.worker.js": { type: "text/javascript; charset=utf-8", body: (b) => b.jsonWorker },
  "graphql.worker.js": { type: "text/javascript; charset=utf-8", body: (b) => b.graphqlWorker },
};

/** `text` escaped for an HTML attribute's value. */
function attribute(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The page yoga answers GET /graphql with (Accept: text/html): its files are all this origin's. */
export function renderGraphiQL(options?: GraphiQLOptions): string {
  const title = options?.title ?? "Stablegate GraphiQL";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${attribute(title)}</title>
${FAVICON_LINK}
<link rel="stylesheet" href="${GRAPHIQL_ASSETS}/graphiql.css">
<script src="${GRAPHIQL_ASSETS}/start.js"></script>
<script src="${GRAPHIQL_ASSETS}/graphiql.js"></script>
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root" data-options="${attribute(JSON.stringify(options ?? {}))}"></div>
</body>
</html>
`;
}

/** The files of the page, loaded and gzipped once each, when first asked for. */
class Files {
  private bundle: Promise<Bundle> | null = null;
  private readonly plain = new Map<string, Buffer>();
  private readonly gzipped = new Map<string, Promise<Buffer>>();

  /** Answers `req` with the file `name`. */
  async send(name: string, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const file = FILES[name]!;
    // A failed load is not kept: the next request tries again.
    this.bundle ??= import("@graphql-yoga/render-graphiql/graphiql").catch((e: unknown) => {
      this.bundle = null;
      throw e;
    });
    if (!this.plain.has(name)) this.plain.set(name, Buffer.from(file.body(await this.bundle)));
    const plain = this.plain.get(name)!;
    reply.type(file.type).header("Cache-Control", "public, max-age=3600").header("Vary", "Accept-Encoding");
    // gzip only: brotli's best level would take seconds over the 5 MB bundle.
    if (!/\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) return reply.send(plain);
    if (!this.gzipped.has(name)) this.gzipped.set(name, promisify(gzip)(plain));
    return reply.header("Content-Encoding", "gzip").send(await this.gzipped.get(name)!);
  }
}

/** Registers GraphiQL's files under /graphiql/ (outside production only: the page is not served there). */
export function graphiqlRoutes(server: FastifyInstance): void {
  const files = new Files();
  server.register(async (scope) => {
    scope.addHook("onSend", async (_req, reply) => {
      reply.headers(GRAPHIQL_HEADERS);
    });
    // A developer's page: it counts against the address's budget like the other public pages.
    const open = { config: { group: "read", auth: "public" } } as const;
    for (const name of Object.keys(FILES)) scope.get(`${GRAPHIQL_ASSETS}/${name}`, open, async (req, reply) => files.send(name, req, reply));
  });
}
