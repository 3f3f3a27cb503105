// Shared reads (lib/coalesce.ts), and the public charge view that uses them: concurrent askers share
// reads, yet no one is answered by a read that began before it asked.
import { describe, expect, it } from "vitest";
import { Coalescer } from "../../src/lib/coalesce.js";
import { POLLING, startApp } from "../helpers/harness.js";

/** A read the test finishes by hand, numbered in the order reads started. */
function manualReads() {
  const started: { n: number; finish: (v: string) => void; fail: (e: Error) => void }[] = [];
  const read = () =>
    new Promise<string>((finish, fail) => {
      started.push({ n: started.length + 1, finish, fail });
    });
  return { started, read };
}
const tick = () => new Promise((r) => setImmediate(r));

describe("Coalescer", () => {
  it("runs one read per key at a time; callers arriving during it share the next read, never the running one", async () => {
    const c = new Coalescer<string, string>();
    const { started, read } = manualReads();
    const first = c.get("a", read);
    const during = [c.get("a", read), c.get("a", read), c.get("a", read)];
    const other = c.get("b", read);
    expect(started.length).toBe(2); // "a" and "b": the three latecomers wait
    started[0]!.finish("read 1");
    expect(await first).toBe("read 1");
    await tick();
    expect(started.length).toBe(3); // one read for all three latecomers, begun after they asked
    started[2]!.finish("read 3");
    expect(await Promise.all(during)).toEqual(["read 3", "read 3", "read 3"]);
    started[1]!.finish("b");
    expect(await other).toBe("b");
    // Nothing is kept: the next caller starts a fresh read.
    const later = c.get("a", read);
    expect(started.length).toBe(4);
    started[3]!.finish("read 4");
    expect(await later).toBe("read 4");
  });

  it("shares a failure with the callers of that read only; the waiting ones still get their own read", async () => {
    const c = new Coalescer<string, string>();
    const { started, read } = manualReads();
    const first = c.get("a", read);
    const waiting = c.get("a", read);
    started[0]!.fail(new Error("connection reset"));
    await expect(first).rejects.toThrow("connection reset");
    await tick();
    started[1]!.finish("fresh");
    expect(await waiting).toBe("fresh");
  });
});

describe("the public charge view", () => {
  it("answers many askers at once with shared reads, and every answer is at least as new as its request", async () => {
    const app = await startApp(POLLING);
    try {
      const id = (await app.call("POST", "/v1/charges", { body: { orderId: "burst-1", amount: "5" } })).body.id as string;
      const isViewRead = (q: string) => /FROM charges WHERE id/.test(q) && /paymentWindowMinutes/.test(q);
      // Fifteen root fields of one operation resolve concurrently: the first reads, the rest share the next read.
      const fields = Array.from({ length: 15 }, (_, i) => `s${i}: paymentSession(chargeId: $id) { status }`).join(" ");
      app.queries.length = 0;
      const burst = await app.gql(`query($id: ID!) { ${fields} }`, { id }, null);
      expect(burst.errors).toBeUndefined();
      expect(new Set(Object.values(burst.data).map((s: any) => s.status))).toEqual(new Set(["PENDING"]));
      expect(app.queries.filter(isViewRead)).toHaveLength(2);
      // A change committed before a request is seen by it, even while reads are running.
      const busy = app.gql(`query($id: ID!) { ${fields} }`, { id }, null);
      expect((await app.call("DELETE", `/v1/charges/${id}`)).status).toBe(200);
      expect((await app.call("GET", `/v1/public/charges/${id}`, { key: null })).body.status).toBe("CANCELLED");
      expect((await busy).errors).toBeUndefined();
    } finally {
      await app.stop();
    }
  });
});
