// The dashboard's routes for people without a session: "Forgot password?" (ask for a link, then set a
// new password with it) and accepting an invitation (choose a password, get signed in). Same origin
// only, each request spending the address's public budget, inside the anonymous bulkhead (a reset or
// an acceptance is a 32 MiB password hash).
import type { FastifyInstance, FastifyRequest } from "fastify";
import { acceptInvitationSchema } from "../domain/invitation-requests.js";
import { acceptInvitation } from "../domain/invitations.js";
import { forgotPasswordSchema, resetPasswordSchema } from "../domain/password-reset-requests.js";
import { requestPasswordReset, resetPasswordWithToken } from "../domain/password-resets.js";
import { openSession } from "../domain/sessions.js";
import { parseInput } from "../domain/validation.js";
import { requestClient } from "../http/callers.js";
import { crossOrigin, fromOwnOrigin } from "../http/session-cookie.js";
import { type DashboardDeps, noStore, signedInReply, signInDevice } from "./routes.js";

/**
 * The least time "Forgot password?" takes to answer, whether or not the email has an account: the
 * work for a known one (a row, an email rendered) is hidden under it.
 */
const FORGOT_ANSWER_MS = 250;

/** Registers /dashboard/password/forgot, /dashboard/password/reset and /dashboard/invitations/accept. */
export function dashboardTeamRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const { prisma, rateLimiter, anonymous, publicUrl } = deps;
  const secure = publicUrl.startsWith("https:");

  /** Runs `work` for an anonymous same-origin POST, within the address's public budget and the bulkhead. */
  const anonymousPost = async <T>(req: FastifyRequest, work: () => Promise<T>): Promise<T> => {
    if (!fromOwnOrigin(req.headers, publicUrl)) throw crossOrigin();
    await rateLimiter.consume(`ip:${req.clientAddress}`, "public");
    const release = await anonymous.enter();
    try {
      return await work();
    } finally {
      release();
    }
  };

  app.post("/dashboard/password/forgot", async (req, reply) => {
    const started = Date.now();
    await anonymousPost(req, () => requestPasswordReset(prisma, parseInput(forgotPasswordSchema, req.body ?? {}), publicUrl));
    const rest = FORGOT_ANSWER_MS - (Date.now() - started);
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    return noStore(reply)
      .code(202)
      .send({ message: "If this email has a dashboard account, a link to choose a new password is on its way. It works once, for one hour." });
  });

  app.post("/dashboard/password/reset", async (req, reply) => {
    await anonymousPost(req, () => resetPasswordWithToken(prisma, parseInput(resetPasswordSchema, req.body ?? {}), requestClient(req)));
    return noStore(reply).send({ message: "Your password was changed and every session was signed out: sign in with the new password." });
  });

  app.post("/dashboard/invitations/accept", async (req, reply) => {
    const device = signInDevice(req);
    const from = { ip: device.ip, userAgent: device.userAgent };
    const opened = await anonymousPost(req, async () =>
      openSession(prisma, await acceptInvitation(prisma, parseInput(acceptInvitationSchema, req.body ?? {}), from), false, device),
    );
    return signedInReply(reply, opened, secure).send(opened.session);
  });
}
