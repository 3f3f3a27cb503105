// The dashboard door: its session endpoints, its CSV downloads and the single page that uses them.
import type { FastifyInstance } from "fastify";
import { dashboardExportRoutes } from "./exports.js";
import { dashboardPages } from "./pages.js";
import { type DashboardDeps, dashboardSessionRoutes } from "./routes.js";
import { dashboardTeamRoutes } from "./team-routes.js";

/** Mounts /dashboard (the page and its assets), /dashboard/session and /dashboard/exports on `server`. */
export function mountDashboard(server: FastifyInstance, deps: DashboardDeps): void {
  dashboardSessionRoutes(server, deps);
  dashboardTeamRoutes(server, deps);
  dashboardExportRoutes(server, deps);
  dashboardPages(server);
}
