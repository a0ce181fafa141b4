// The results of a benchmark, for `npm run bench` (tools/bench/run.mjs): each benchmark calls
// `record(...)` for every figure it measured; when run.mjs started it (BENCH_RESULTS names a file), the
// rows are appended to that file as JSON lines, and run.mjs prints and writes them as one table.
// Run alone, a benchmark prints its own output as before and record() writes nothing.
import { appendFileSync } from 'node:fs';

/**
 * measure: what was measured ("identity project-group/get throughput");
 * ours / baseline: the figures (numbers; baseline may be absent when the goal is absolute);
 * unit: of ours and baseline ("req/s", "MB", "ms");
 * ratio: ours / baseline when both exist (computed when not given);
 * goal: the target, as text ("≥ 0.7×", "≤ 90 MB"); met: whether it was met (true/false/undefined).
 */
export function record({ measure, ours, baseline, unit = '', ratio, goal = '', met }) {
  const file = process.env.BENCH_RESULTS;
  if (!file) return;
  const r = ratio ?? (typeof ours === 'number' && typeof baseline === 'number' && baseline ? ours / baseline : undefined);
  const row = { bench: process.env.BENCH_NAME || '', measure, ours, baseline, unit, ratio: r, goal, met };
  appendFileSync(file, `${JSON.stringify(row)}\n`);
}
