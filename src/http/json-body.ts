// How a JSON request body is read, for every route: as UTF-8 that must decode cleanly (RFC 8259), and an
// empty body is no body whatever its Content-Type says. Many HTTP clients send `Content-Type:
// application/json` on every request, a bodyless DELETE included; such a request means the same as one
// without the header. A route that needs a body then says which parameter is missing.
import type { FastifyInstance } from "fastify";
import { AppError } from "../domain/errors.js";

// fatal: a byte sequence that is not UTF-8 is refused rather than stored as U+FFFD, which would change
// what the caller sent without telling them.
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Replaces Fastify's JSON parser on `app` with one that refuses invalid UTF-8 and takes an empty body
 * as none, and takes an empty body of any other type as none too (a form-encoding client's bodyless
 * DELETE), refusing a non-empty one.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  // The default parser keeps the prototype-poisoning refusal the server was created with.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (req, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) return done(null, undefined);
    let text: string;
    try {
      text = UTF8.decode(bytes);
    } catch {
      return done(new AppError("body_invalid_json", "The request body is not valid UTF-8: send JSON text encoded as UTF-8"), undefined);
    }
    parseJson(req, text, done);
  });
  // The catch-all: a scope's own parser (the hosted pages' forms) still wins for its type.
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(new AppError("body_invalid_json", "Request bodies must be JSON sent with 'Content-Type: application/json'"), undefined);
  });
}
