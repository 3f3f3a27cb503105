// The API process's doors on one HTTP server, over the services of services.ts: REST (/v1), GraphQL,
// the hosted payment pages and the dashboard each mount themselves. The background jobs are started
// by main.ts and worker.ts (jobs/index.ts).
import type { FastifyInstance } from "fastify";
import { relayerProblems } from "./domain/chain-status.js";
import { mountDashboard } from "./dashboard/index.js";
import { faviconRoutes } from "./http/favicon.js";
import { mountGraphQL } from "./graphql/index.js";
import { installCors } from "./http/cors.js";
import { installInputGuard } from "./http/input-guard.js";
import { metricsRoute } from "./http/metrics.js";
import { createServer, leaveRotation, listen } from "./http/server.js";
import { mountPay } from "./pay/index.js";
import { mountRest } from "./rest/index.js";
import type { Services } from "./services.js";

/** A built service: start it on a port, stop it gracefully. */
export interface App {
  /** Listens on `port` (default from config; 0 picks a free one) and returns the base URL. */
  start(port?: number): Promise<string>;
  /** Fails /readyz from now on while still serving: the first step of a graceful stop. */
  leaveRotation(): void;
  /** Stops taking requests, waits for those in flight, then closes connections (the services stay open). */
  stop(): Promise<void>;
}

/**
 * The HTTP server every process answers on: /healthz, /readyz (the database, pub/sub, the chains'
 * relayers and whether email is configured) and /metrics. `runsJobs`: this process runs the background jobs, so /metrics has the database's figures.
 */
export function createOpsServer(services: Services, runsJobs: boolean): FastifyInstance {
  const { config, db, pubsub, chains, metrics } = services;
  const server = createServer(services.logger, db, pubsub, {
    problems: () => relayerProblems(db.prisma, chains.all()),
    trustRequestIds: config.trustProxy > 0,
    publicUrl: config.publicUrl,
    email: config.email.smtpUrl ? "configured" : "not_configured",
  });
  metricsRoute(server, { config, metrics, db, pubsub, chains: chains.all(), runsJobs });
  return server;
}

/** Builds the API on `services`: every door on one server. */
export function buildApp(services: Services): App {
  const { config } = services;
  // main.ts runs the jobs in this process exactly when RUN_WORKER.
  const server = createOpsServer(services, config.runWorker);
  installInputGuard(server, { except: ["/graphql"] });
  installCors(server, config.corsOrigins);
  const doors = {
    ...services,
    charges: services.settings,
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    subscriptionRetrySchedule: config.subscriptionRetrySchedule,
  };
  const rest = mountRest(server, doors);
  mountPay(server, { ...doors, devnet: services.devnet, frameAncestors: config.paymentFrameAncestors });
  mountDashboard(server, doors);
  faviconRoutes(server);
  const closeGraphQL = mountGraphQL(server, doors);
  return {
    start: (port = config.port) => listen(server, port, config.host),
    leaveRotation: () => leaveRotation(server),
    async stop() {
      await rest.stop();
      await closeGraphQL();
      // Before the server: ending the subscriptions ends the SSE streams the server would wait for.
      await services.pubsub.close();
      await server.close();
    },
  };
}
