// Text the database cannot store (domain/text.ts) is refused at the HTTP door for every route:
// path params, query and body are checked after the body is parsed and before authentication or
// any handler, so the request is a 400 naming the parameter and changes nothing.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { assertValidText } from "../domain/text.js";

/** One method and URL pattern the guard checks. */
export interface GuardedRoute {
  method: string;
  url: string;
}

// Across every app built in this process; keyed so that rebuilding an app adds nothing.
const guarded = new Map<string, GuardedRoute>();

/** Every route an input guard in this process checks (the hostile-strings test walks them all). */
export function guardedRoutes(): GuardedRoute[] {
  return [...guarded.values()];
}

/**
 * Guards every route registered on `app` after this call, except the URLs in `except`: GraphQL
 * answers in its own error shape and has its own guard (graphql/input-guard.ts).
 */
export function installInputGuard(app: FastifyInstance, { except = [] }: { except?: string[] } = {}): void {
  app.addHook("onRoute", (route) => {
    if (except.includes(route.url)) return;
    for (const method of [route.method].flat()) guarded.set(`${method} ${route.url}`, { method, url: route.url });
    // preValidation: the body is parsed by then, and the auth preHandler has not run yet.
    route.preValidation = [checkText, ...[route.preValidation ?? []].flat()];
  });
}

async function checkText(req: FastifyRequest): Promise<void> {
  assertValidText(req.params);
  assertValidText(req.query);
  assertValidText(req.body);
}
