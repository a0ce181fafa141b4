#!/usr/bin/env node
// `npm run bench`: builds, then runs every benchmark of tools/bench (or the ones named) in sequence,
// in short mode (BENCH_FULL=1: the full sizes), prints one table (measure, ours, baseline, ratio, goal)
// and writes it to docs/benchmarks.md with the date, the machine (cores, memory) and the commit.
//   npm run bench                     every benchmark, short
//   npm run bench -- footprint        the ones whose path contains one of the words
//   BENCH_NOTE="..."                  a line written under the header (e.g. "the machine was busy")
//   BENCH_OUT=path                    where to write the table (default docs/benchmarks.md; "-" for nowhere)
// A benchmark exits non-zero only when it could not run (a missed goal is a row, not a failure); such a
// benchmark is listed under the table, and run.mjs exits non-zero once all have run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, '../..');
const full = process.env.BENCH_FULL === '1';
const wanted = process.argv.slice(2);
const scripts = readdirSync(here, { recursive: true })
  .filter((f) => f.endsWith('.mjs') && !f.startsWith('lib') && f !== 'run.mjs' && statSync(path.join(here, f)).isFile() && !f.includes('/lib/'))
  .filter((f) => !wanted.length || wanted.some((w) => f.includes(w)))
  .sort();

// Short mode: sizes and durations that keep a whole run to minutes; each benchmark's own defaults
// (its header comment) are the full sizes. An explicit variable in the environment always wins.
const SHORT = {
  BENCH_SECONDS: '5',
  BENCH_GROUPS: '2000',
  BENCH_STORAGES: '2000',
  BENCH_REPEAT: '9',
  COST_BENCH_ROWS: '50000',
  COST_BENCH_UNIFIED_ROWS: '50000',
  BENCH_ROWS: '50000',
  LIST_ROWS: '20000',
  ANALYZE_ROWS: '50000',
  RUNS: '11',
  FOOTPRINT_IDLE_SECONDS: '20',
  FOOTPRINT_LOAD_SECONDS: '20',
  FOOTPRINT_AFTER_SECONDS: '60',
};
const FULL = { FOOTPRINT_LOAD_SECONDS: '60' };
const sizes = full ? FULL : SHORT;

const build = spawnSync('node_modules/.bin/nx', ['run-many', '-t', 'build'], { cwd: root, stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false' } });
if (build.status !== 0) {
  console.error('bench: the build failed');
  process.exit(2);
}
const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-'));
const results = path.join(dir, 'results.jsonl');
const failed = [];
const started = Date.now();
for (const s of scripts) {
  console.log(`\n== ${s}`);
  const t = Date.now();
  const r = spawnSync(process.execPath, [path.join(here, s)], {
    cwd: root,
    stdio: 'inherit',
    env: { ...sizes, ...process.env, BENCH_RESULTS: results, BENCH_NAME: s.replace(/\.mjs$/, '') },
  });
  if (r.status !== 0) failed.push(`${s} (exit ${r.status ?? r.signal})`);
  console.log(`== ${s}: ${((Date.now() - t) / 1000).toFixed(0)} s`);
}
const rows = existsSync(results) ? readFileSync(results, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
rmSync(dir, { recursive: true, force: true });

const num = (x, unit) => {
  if (typeof x !== 'number' || !Number.isFinite(x)) return x === undefined ? '' : String(x);
  const v = Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : String(Math.round(x * 100) / 100);
  return unit ? `${v} ${unit}` : v;
};
const cells = (r) => [
  r.bench ? `${r.bench}: ${r.measure}` : r.measure,
  num(r.ours, r.unit),
  num(r.baseline, r.unit),
  typeof r.ratio === 'number' ? `${r.ratio.toFixed(2)}×` : '',
  r.goal ?? '',
  r.met === true ? 'met' : r.met === false ? 'missed' : '',
];
const head = ['measure', 'ours', 'baseline', 'ratio', 'goal', ''];
const table = [head, ...rows.map(cells)];
const widths = head.map((_, k) => Math.max(...table.map((c) => c[k].length)));
console.log(`\n${table.map((c) => c.map((x, k) => (k === 0 || k === 4 ? x.padEnd(widths[k]) : x.padStart(widths[k]))).join('  ')).join('\n')}`);
if (failed.length) console.log(`\ncould not run: ${failed.join(', ')}`);

const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim();
const dirty = spawnSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).stdout.trim() ? ' (with uncommitted changes)' : '';
const cpus = os.cpus();
const machine = `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.platform()} ${os.release()}, node ${process.version}`;
const out = process.env.BENCH_OUT ?? path.join(root, 'docs/benchmarks.md');
/** What follows this line in the file is written by hand (measurements of another kind) and kept. */
const KEPT = '<!-- kept by npm run bench: hand-written measurements below -->';
if (out !== '-') {
  const previous = existsSync(out) ? readFileSync(out, 'utf8') : '';
  const kept = previous.includes(KEPT) ? previous.slice(previous.indexOf(KEPT)) : '';
  const md = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` (tools/bench/run.mjs); ${full ? 'full sizes (BENCH_FULL=1)' : 'short mode (BENCH_FULL=1 for the full sizes)'}.`,
    ...(process.env.BENCH_NOTE ? ['', `**${process.env.BENCH_NOTE}**`] : []),
    '',
    `- date: ${new Date().toISOString()}`,
    `- machine: ${machine}`,
    `- commit: ${commit}${dirty}`,
    `- benchmarks: ${scripts.map((s) => s.replace(/\.mjs$/, '')).join(', ')} (${Math.round((Date.now() - started) / 1000)} s)`,
    '',
    `| ${head.slice(0, 5).join(' | ')} | met |`,
    '| --- | ---: | ---: | ---: | --- | --- |',
    ...rows.map((r) => `| ${cells(r).map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`),
    '',
    ...(failed.length ? [`Could not run: ${failed.join(', ')}.`, ''] : []),
    'A goal is a target, not a test: a missed goal is reported here, never a failed run.',
    '',
  ].join('\n');
  writeFileSync(out, kept ? `${md}\n${kept}` : md);
  console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
}
process.exit(failed.length ? 1 : 0);
