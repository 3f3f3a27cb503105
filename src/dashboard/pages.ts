// Serves the dashboard's single page at /dashboard and every path below it (the app routes in the
// browser), with the bundle `npm run build` made, under a strict CSP: our own script, stylesheet and
// connections only (and frames of its own: an email's preview), no inline code, never in a frame.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { CompressedAsset } from "../http/compression.js";
import { FAVICON_LINK } from "../http/favicon.js";
import { securityHeaders } from "../http/security-headers.js";

/** Where the bundle is, from src/dashboard (tests) and from dist/dashboard (the built service) alike. */
const ASSETS = new URL("../../dist/dashboard/assets/", import.meta.url);

// The page's script talks only to its own origin (the API and /graphql are there). Developers → Emails
// frames an email's HTML from /dashboard/emails/:id/html, sandboxed and under a policy of its own.
const SECURITY = securityHeaders({ script: { connectTo: [] }, frameAncestors: [], referrer: "same-origin", ownFrames: true });

const SCRIPT = "text/javascript; charset=utf-8";

interface Bundle {
  /** The single page, the same for every path below /dashboard until the bundle changes. */
  shell: CompressedAsset;
  script: CompressedAsset;
  style: CompressedAsset;
  /** The pages' chunks by file name (content-hashed, so cached for good without a version). */
  chunks: Map<string, CompressedAsset>;
  /** Changes with the bundle: in the asset URLs, so that they can be cached for good. */
  version: string;
}

/** The bundle, read and compressed once (http/compression.ts); null while it has not been built. */
function loadBundle(): Bundle | null {
  try {
    const script = readFileSync(new URL("app.js", ASSETS));
    const style = readFileSync(new URL("app.css", ASSETS));
    const version = createHash("sha256").update(script).update(style).digest("hex").slice(0, 12);
    const names = (() => {
      try {
        return readdirSync(new URL("chunks/", ASSETS)).filter((n) => n.endsWith(".js"));
      } catch {
        return [];
      }
    })();
    const chunks = new Map(names.map((n) => [n, new CompressedAsset(readFileSync(new URL(`chunks/${n}`, ASSETS)), SCRIPT)]));
    return {
      shell: new CompressedAsset(Buffer.from(shell(version)), "text/html; charset=utf-8"),
      script: new CompressedAsset(script, SCRIPT),
      style: new CompressedAsset(style, "text/css; charset=utf-8"),
      chunks,
      version,
    };
  } catch {
    return null;
  }
}

/** Registers /dashboard (and its client-side routes), its entry script, stylesheet and the pages' chunks. */
export function dashboardPages(app: FastifyInstance): void {
  let bundle: Bundle | null = null;
  const current = () => (bundle ??= loadBundle());
  const secure = (reply: FastifyReply) => reply.headers(SECURITY);

  const page = async (req: FastifyRequest, reply: FastifyReply) => {
    const built = current();
    secure(reply).header("Cache-Control", "no-store");
    if (!built) return reply.code(503).type("text/html; charset=utf-8").send(unbuilt());
    return built.shell.send(req, reply);
  };
  // Like the hosted page, every request spends the client address's public budget.
  const open = { config: { group: "read", auth: "public" } } as const;
  app.get("/dashboard", open, page);
  app.get("/dashboard/*", open, page);

  const send = (req: FastifyRequest, reply: FastifyReply, found: CompressedAsset) =>
    found.send(req, secure(reply).header("Cache-Control", "public, max-age=31536000, immutable"));
  const missing = (reply: FastifyReply, why: string) => secure(reply).code(404).type("text/plain; charset=utf-8").send(why);
  const asset = (name: "script" | "style") => async (req: FastifyRequest, reply: FastifyReply) => {
    const built = current();
    return built ? send(req, reply, built[name]) : missing(reply, "The dashboard is not built: run npm run build.");
  };
  app.get("/dashboard/assets/app.js", open, asset("script"));
  app.get("/dashboard/assets/app.css", open, asset("style"));
  app.get<{ Params: { name: string } }>("/dashboard/assets/chunks/:name", open, async (req, reply) => {
    const chunk = current()?.chunks.get(req.params.name);
    // A chunk of an earlier build: the page that asked for it says to reload.
    return chunk ? send(req, reply, chunk) : missing(reply, "No such chunk: reload the dashboard.");
  });
}

function shell(version: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>Stablegate dashboard</title>
${FAVICON_LINK}
<link rel="stylesheet" href="/dashboard/assets/app.css?v=${version}">
<script type="module" src="/dashboard/assets/app.js?v=${version}"></script>
</head>
<body>
<div id="app"><noscript>The dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
}

function unbuilt(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Stablegate dashboard</title>${FAVICON_LINK}</head>
<body><main><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (npm start does), then reload.</p></main></body></html>
`;
}
