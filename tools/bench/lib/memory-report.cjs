// Preloaded by tools/bench/footprint.mjs --breakdown (node --require): on SIGUSR2 the process writes one
// JSON line {"memory_report": process.memoryUsage()} to stdout, after a full GC when --expose-gc is on.
process.on('SIGUSR2', () => {
  process.stdout.write(`${JSON.stringify({ memory_report: process.memoryUsage() })}\n`);
});
