// The dashboard door: its session endpoints, its CSV downloads, emails' HTML for their previews and the single page that uses them.
import type { FastifyInstance } from "fastify";
import { dashboardEmailRoutes } from "./email-preview.js";
import { dashboardExportRoutes } from "./exports.js";
import { dashboardPages } from "./pages.js";
import { type DashboardDeps, dashboardSessionRoutes } from "./routes.js";
import { dashboardTeamRoutes } from "./team-routes.js";

/** Mounts /dashboard (the page and its assets), /dashboard/session, /dashboard/exports and /dashboard/emails on `server`. */
export function mountDashboard(server: FastifyInstance, deps: DashboardDeps): void {
  dashboardSessionRoutes(server, deps);
  dashboardTeamRoutes(server, deps);
  dashboardExportRoutes(server, deps);
  dashboardEmailRoutes(server, deps);
  dashboardPages(server);
}
