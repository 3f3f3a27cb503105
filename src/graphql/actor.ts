// Who acts in an operation any caller may make (webhook endpoints: an API key or a dashboard session),
// as the security history records it. Session-only operations use `ctx.actor()`.
import type { Actor } from "../domain/security-events.js";
import type { GraphQLContext } from "./context.js";

/** The caller as an actor: a session's user (an API key has none), the request's address and browser. */
export function callerActor(ctx: GraphQLContext): Actor {
  return { userId: ctx.principal?.userId ?? null, email: null, ip: ctx.address, userAgent: ctx.userAgent };
}
