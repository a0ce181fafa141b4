#!/usr/bin/env node
// The cost worker's CSV reader alone (apps/cost-analysis/src/plugin/csv-reader.ts, issue #32): records/s
// of readCsv over a generated file of CSV_BENCH_ROWS rows (default 200000; every 10th row with a quoted
// field holding a comma and a doubled quote, so both the fast and the quoted path are measured), read
// from disk in 16 KiB chunks as an HTTP body arrives. BENCH_CSV_BASE_REF=<git revision> also runs that
// revision's reader, interleaved round by round, for a before/after; the target is then >= 1.0x (the
// fastest round of each).
//   node tools/bench/cost-analysis/csv-parse.mjs                       (BENCH_REPEAT rounds, default 7)
//   BENCH_CSV_BASE_REF=da46a74 node tools/bench/cost-analysis/csv-parse.mjs
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bundle, root } from '../../build/bundle.mjs';
import { record } from '../lib/report.mjs';

const ROWS = Number(process.env.CSV_BENCH_ROWS || 200_000);
const REPEAT = Number(process.env.BENCH_REPEAT || 7);
const BASE = process.env.BENCH_CSV_BASE_REF;
const dir = path.join(root, 'tmp/bench-csv-parse');
mkdirSync(dir, { recursive: true });
const fmt = (n) => Math.round(n).toLocaleString('en-US');

const file = path.join(dir, `costs-${ROWS}.csv`);
if (!existsSync(file)) {
  const out = createWriteStream(file);
  out.write('cost,currency,usage_quantity,provider,region_code,product,account,usage_type,usage_unit,year,month,day\n');
  let buf = '';
  for (let i = 0; i < ROWS; i++) {
    const product = i % 10 ? `product-${i % 20}` : `"product ${i % 20}, ""large"""`;
    buf += `${((i * 7919) % 100_000) / 100},USD,${i % 1000},aws,us-east-1,${product},acct-${i % 10},type-${i % 5},Hrs,2024,${(i % 12) + 1},${1 + (i % 28)}\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}

/** The reader of the working tree, or of `ref` (its csv-reader.ts and types.ts), bundled. */
async function reader(ref) {
  let entry = path.join(root, 'apps/cost-analysis/src/plugin/csv-reader.ts');
  if (ref) {
    const src = path.join(dir, `ref-${ref}`);
    mkdirSync(src, { recursive: true });
    for (const f of ['csv-reader.ts', 'types.ts']) {
      writeFileSync(path.join(src, f), execFileSync('git', ['show', `${ref}:apps/cost-analysis/src/plugin/${f}`], { cwd: root }));
    }
    entry = path.join(src, 'csv-reader.ts');
  }
  const outfile = path.join(dir, `${ref ? `ref-${ref}` : 'tree'}.cjs`);
  await bundle({ entryPoints: [entry], outfile });
  return createRequire(import.meta.url)(outfile).readCsv;
}

async function run(readCsv) {
  const t0 = process.hrtime.bigint();
  let n = 0;
  for await (const b of readCsv(createReadStream(file, { highWaterMark: 16 * 1024 }))) n += b.records.length;
  if (n !== ROWS + 1) throw new Error(`read ${n} records, expected ${ROWS + 1}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const variants = { tree: await reader() };
if (BASE) variants[BASE] = await reader(BASE);
const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let r = 0; r < REPEAT; r++) for (const [k, f] of Object.entries(variants)) times[k].push(await run(f));
// The fastest round of each: on a shared machine the slower rounds measure the neighbours.
const best = (xs) => Math.min(...xs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rate = (k) => (ROWS + 1) / (best(times[k]) / 1000);
for (const k of Object.keys(variants)) {
  console.log(`${k === 'tree' ? 'this tree' : k}: ${fmt(rate(k))} records/s (fastest of ${REPEAT}: ${best(times[k]).toFixed(0)} ms, median ${median(times[k]).toFixed(0)} ms)`);
}
if (BASE) {
  const ratio = rate('tree') / rate(BASE);
  console.log(`this tree / ${BASE} = ${ratio.toFixed(2)}x  (target >= 1.0x: parsing must not get slower)`);
  record({ measure: `CSV reader: records/s of ${fmt(ROWS)} rows vs ${BASE}`, ours: Math.round(rate('tree')), baseline: Math.round(rate(BASE)), unit: 'records/s', goal: '≥ 1.0×', met: ratio >= 1 });
} else {
  record({ measure: `CSV reader: records/s of ${fmt(ROWS)} rows`, ours: Math.round(rate('tree')), unit: 'records/s' });
}
