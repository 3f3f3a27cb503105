// GET /v1/openapi.json of the built service (dist/), read from a server that registers the REST
// routes and serves nothing else: what `npm run schema` generates the SDK's types from and
// .ci/lint-openapi.mjs lints. PUBLIC_URL is the default, as a fresh install serves it.
import Fastify from "fastify";
import { mountRest } from "../dist/rest/index.js";

/** The OpenAPI document the REST routes declare. */
export async function openApiDocument() {
  const server = Fastify();
  const unused = new Proxy({}, { get: () => () => Promise.reject(new Error("not for serving")) });
  // The document is public within an address's budget: here every budget is open.
  const rateLimiter = { check: async () => {}, consume: async () => ({ limit: 1, remaining: 1, reset: 60 }) };
  const anonymous = { refuseWhenSaturated: () => {}, enter: async () => () => {} };
  const hostedPages = { chargeOf: () => null, enter: async () => () => {} };
  const task = mountRest(server, {
    prisma: unused,
    authenticator: unused,
    rateLimiter,
    anonymous,
    hostedPages,
    charges: { amount: { min: 1n, max: 1n }, paymentBaseUrl: "http://localhost:4000/pay" },
    chains: unused,
    trustProxy: 0,
    subscriptionRetrySchedule: [],
    logger: unused,
    publicUrl: "http://localhost:4000",
  });
  task.stop();
  try {
    return JSON.parse((await server.inject({ method: "GET", url: "/v1/openapi.json" })).body);
  } finally {
    await server.close();
  }
}
