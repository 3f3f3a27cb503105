// The devnet's anvil never outlives the process that started it: not after a clean stop, and not
// after that process is killed with SIGKILL (nothing of ours runs then; anvil's guard notices).
import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { startAnvil } from "../../src/chain/anvil.js";
import { waitFor } from "../helpers/chain.js";

/** Whether an anvil answers at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
    return (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
}

it("stops with stop()", async () => {
  const anvil = await startAnvil();
  expect(await answers(anvil.url)).toBe(true);
  await anvil.stop();
  expect(await answers(anvil.url)).toBe(false);
});

it("stops within seconds when the process that started it is killed with SIGKILL", async () => {
  // A process that starts anvil (the built module, as `npm start` runs it), says where, and waits.
  const script = `import("./dist/chain/anvil.js").then(async (m) => { const a = await m.startAnvil(); console.log(a.url); setInterval(() => {}, 1000); });`;
  const parent = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve) => parent.stdout!.on("data", (d: Buffer) => resolve(d.toString().trim())));
  expect(await answers(url)).toBe(true);
  parent.kill("SIGKILL");
  await waitFor("anvil to stop after its parent died", async () => !(await answers(url)), 5_000);
}, 30_000);
