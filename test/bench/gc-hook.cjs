// Preloaded into benchmarked processes (node --expose-gc --require): on SIGUSR2, collects garbage
// and prints the memory in use, so idle memory is measured without what the GC has yet to reclaim.
process.on("SIGUSR2", () => {
  globalThis.gc();
  globalThis.gc();
  process.stderr.write(`BENCH_MEMORY ${JSON.stringify(process.memoryUsage())}\n`);
});
