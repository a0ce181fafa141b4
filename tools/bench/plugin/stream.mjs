#!/usr/bin/env node
// Benchmark of a get_data stream through the plugin protocol: rows/s of a cost collection's rows
// streamed from a TypeScript plugin (libs/plugin-kit, in its own process, as a plugin container is)
// through the client (libs/plugin) and consumed, against generating the same rows in process (what a
// built-in plugin hands the collector). Also the client's heap growth during the stream, which the
// back-pressure keeps flat whatever the length.
//
//   node tools/bench/plugin/stream.mjs                               # 200 000 rows, 1000 a message, 3 runs
//   BENCH_PLUGIN_ROWS=50000 BENCH_RUNS=1 node tools/bench/plugin/stream.mjs
//
// Env: BENCH_PLUGIN_ROWS (200000), BENCH_PLUGIN_PAGE (rows per message, 1000), BENCH_RUNS (3, median).
// The libraries are bundled with tools/build/bundle.mjs into tmp/bench-plugin/.
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from '../../build/bundle.mjs';
import { record } from '../lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../../..');
const ROWS = Number(process.env.BENCH_PLUGIN_ROWS || 200_000);
const PAGE = Number(process.env.BENCH_PLUGIN_PAGE || 1000);
const RUNS = Number(process.env.BENCH_RUNS || 3);

/** One cost row, as upstream's plugins send them (a few tags and additional_info). */
function row(i) {
  return {
    cost: (i % 997) * 0.013,
    usage_quantity: i % 24,
    usage_unit: 'Hrs',
    provider: 'aws',
    region_code: ['us-east-1', 'eu-west-1', 'ap-northeast-2'][i % 3],
    product: 'AmazonEC2',
    usage_type: `BoxUsage:m5.large-${i % 50}`,
    resource: `arn:aws:ec2:us-east-1:123456789012:instance/i-${(1e12 + i).toString(16)}`,
    tags: { team: `team-${i % 20}`, env: i % 2 ? 'prod' : 'dev', cost_center: String(1000 + (i % 7)) },
    additional_info: { account_id: '123456789012', line_item: i },
    data: {},
    billed_date: `2024-01-${String(1 + (i % 28)).padStart(2, '0')}`,
  };
}

function* pages(rows, page) {
  for (let start = 0; start < rows; start += page) {
    const results = [];
    for (let i = start; i < Math.min(rows, start + page); i++) results.push(row(i));
    yield { results };
  }
}

/** Consumes pages as the collector would (every field read); answers rows and a checksum. */
async function consume(iterable, onPage) {
  let rows = 0;
  let sum = 0;
  for await (const p of iterable) {
    for (const r of p.results) {
      rows++;
      sum += r.cost + r.usage_quantity + r.billed_date.length + Object.keys(r.tags).length;
    }
    onPage?.();
  }
  return { rows, sum };
}

const entry = path.join(ROOT, 'tmp/bench-plugin/plugin.cjs');

if (process.argv[2] === 'serve') {
  // the plugin's process
  const { serveCostDataSource } = createRequire(import.meta.url)(entry);
  const server = await serveCostDataSource({
    init: () => ({}),
    getTasks: () => ({}),
    getData: (req) => pages(Number(req.task_options.rows), Number(req.task_options.page)),
  });
  process.send({ endpoint: server.endpoint });
  process.on('message', async () => {
    await server.stop(1000);
    process.exit(0);
  });
} else {
  await bundle({ entryPoints: [path.join(here, 'entry.ts')], outfile: entry });
  const { PluginClients, pluginClientConfigFromEnv } = createRequire(import.meta.url)(entry);
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { stdio: 'inherit' });
  const { endpoint } = await new Promise((resolve) => child.once('message', resolve));
  const clients = new PluginClients(pluginClientConfigFromEnv());
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

  const inProcess = [];
  const grpc = [];
  const heapGrowth = [];
  let expected;
  for (let run = 0; run < RUNS + 1; run++) {
    // in process: the same rows generated and consumed with no protocol between
    let t = process.hrtime.bigint();
    const a = await consume(pages(ROWS, PAGE));
    const inMs = Number(process.hrtime.bigint() - t) / 1e6;
    // through the protocol
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    let heapMax = heapBefore;
    t = process.hrtime.bigint();
    const b = await consume(clients.cost(endpoint).cost.getData({ task_options: { rows: ROWS, page: PAGE } }), () => {
      heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
    });
    const grpcMs = Number(process.hrtime.bigint() - t) / 1e6;
    expected ??= a;
    if (a.rows !== ROWS || b.rows !== ROWS || Math.abs(a.sum - b.sum) > 1e-6 * Math.abs(a.sum)) throw new Error(`rows differ: ${JSON.stringify({ a, b })}`);
    if (run === 0) continue; // warm-up
    inProcess.push((ROWS / inMs) * 1000);
    grpc.push((ROWS / grpcMs) * 1000);
    heapGrowth.push((heapMax - heapBefore) / 2 ** 20);
    console.log(`run ${run}: in process ${Math.round((ROWS / inMs) * 1000)} rows/s, through gRPC ${Math.round((ROWS / grpcMs) * 1000)} rows/s, heap growth ${((heapMax - heapBefore) / 2 ** 20).toFixed(1)} MB`);
  }
  const ours = median(grpc);
  const baseline = median(inProcess);
  console.log(`\n${ROWS} rows, ${PAGE} a message: gRPC stream ${Math.round(ours)} rows/s, in process ${Math.round(baseline)} rows/s (${(ours / baseline).toFixed(2)}×); client heap growth ${median(heapGrowth).toFixed(1)} MB`);
  record({ measure: `get_data stream of ${ROWS} rows (${PAGE} a message) through gRPC vs generated in process`, ours, baseline, unit: 'rows/s' });
  record({ measure: `client heap growth during a ${ROWS}-row get_data stream`, ours: median(heapGrowth), unit: 'MB' });
  clients.close();
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
}
