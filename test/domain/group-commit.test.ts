// Group commits (lib/group-commit.ts): items that arrive while a write runs go together in the next
// one, each caller is answered by its own write, and a failed write fails only its own items.
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/lib/group-commit.js";

/** A write the test finishes by hand, recording the items of each write in order. */
function manualWrites() {
  const writes: { items: number[]; finish: () => void; fail: (e: Error) => void }[] = [];
  const write = (items: number[]) =>
    new Promise<void>((finish, fail) => {
      writes.push({ items, finish, fail });
    });
  return { writes, write };
}
const tick = () => new Promise((r) => setImmediate(r));

describe("GroupCommit", () => {
  it("writes the first item at once, and those arriving meanwhile together in the next write", async () => {
    const { writes, write } = manualWrites();
    const group = new GroupCommit(write);
    const settled: number[] = [];
    const add = (n: number) => group.add(n).then(() => settled.push(n));
    const first = add(1);
    await tick();
    expect(writes.map((w) => w.items)).toEqual([[1]]);
    const rest = [add(2), add(3), add(4)];
    await tick();
    expect(writes).toHaveLength(1); // one write at a time
    writes[0]!.finish();
    await first;
    expect(settled).toEqual([1]);
    await tick();
    expect(writes.map((w) => w.items)).toEqual([[1], [2, 3, 4]]);
    writes[1]!.finish();
    await Promise.all(rest);
    expect(settled).toEqual([1, 2, 3, 4]);
  });

  it("keeps each write to `max` items", async () => {
    const { writes, write } = manualWrites();
    const group = new GroupCommit(write, 2);
    const all = [1, 2, 3, 4, 5].map((n) => group.add(n));
    await tick();
    writes[0]!.finish();
    await tick();
    writes[1]!.finish();
    await tick();
    writes[2]!.finish();
    await Promise.all(all);
    expect(writes.map((w) => w.items)).toEqual([[1], [2, 3], [4, 5]]);
  });

  it("rejects the items of a failed write only, and goes on writing the next", async () => {
    const { writes, write } = manualWrites();
    const group = new GroupCommit(write);
    const first = group.add(1);
    await tick();
    const second = group.add(2);
    writes[0]!.fail(new Error("the database is gone"));
    await expect(first).rejects.toThrow("the database is gone");
    await tick();
    expect(writes.map((w) => w.items)).toEqual([[1], [2]]);
    writes[1]!.finish();
    await expect(second).resolves.toBeUndefined();
  });

  it("when a write of several fails, writes them one at a time and rejects only the one that fails alone", async () => {
    const writes: number[][] = [];
    const group = new GroupCommit(async (items: number[]) => {
      writes.push(items);
      if (items.includes(3)) throw new Error("item 3 is refused");
    });
    const first = group.add(1);
    const rest = [2, 3, 4].map((n) => group.add(n));
    await first;
    const settled = await Promise.allSettled(rest);
    expect(settled.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(writes).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });
});
