// The merchant's backend in the abuse benchmark, in its own process so the flood's client does not
// slow its measurements: on a message { service, key, charges, ms, rate }, keyed reads at a steady
// pace on one keep-alive connection; replies with their latencies' summary.
import http from "node:http";
import { percentile } from "./kit.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

process.on("message", async ({ service, key, charges, ms, rate }) => {
  const get = (path) =>
    new Promise((resolve, reject) => {
      http
        .get(`${service}${path}`, { agent, headers: { "x-api-key": key } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode));
        })
        .on("error", reject);
    });
  const latencies = [];
  const slow = []; // [seconds into the window, ms] of requests over 50 ms: when the tail happens
  const t = performance.now();
  const failures = {};
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end; i++) {
    const t0 = performance.now();
    const status = await get(`/v1/charges/${charges[i % charges.length]}`).catch(() => "error");
    const took = performance.now() - t0;
    if (status === 200) latencies.push(took);
    else failures[status] = (failures[status] ?? 0) + 1;
    if (took > 50) slow.push([Math.round((t0 - t) / 100) / 10, Math.round(took)]);
    await sleep(Math.max(0, 1000 / rate - (performance.now() - t0)));
  }
  process.send({
    requests: latencies.length,
    failures,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    slow,
  });
});
