import { startPlatform } from '@platform/testing';
import type { GenEnv } from './gen';
import { Harness, INGEST_TOKEN } from './harness';
import { discoverTargets, formatReport, fuzz, type FuzzOptions, type FuzzReport } from './runner';
import { setup, startCsvServer } from './setup';

/**
 * This tool's ports (31000-31999): the apps at their standard port + 23000, the CSV server at 31999.
 * FUZZ_PORT_OFFSET, FUZZ_CSV_PORT and FUZZ_REDIS_URL move it, so two runs on one machine do not meet.
 */
export const PORT_OFFSET = Number(process.env.FUZZ_PORT_OFFSET || 23_000);
export const CSV_PORT = Number(process.env.FUZZ_CSV_PORT || 31_999);
/** Database 10 of the shared Redis is the fuzzer's own (flushed at start and stop). */
export const REDIS_URL = process.env.FUZZ_REDIS_URL || 'redis://127.0.0.1:6379/10';

export interface RunOptions extends Omit<FuzzOptions, 'log'> {
  timeoutMs: number;
  /** Build the apps first (default true). */
  build?: boolean;
  log?: (line: string) => void;
  /** How `npm run fuzz` reproduces one failure. */
  command?: string;
}

/**
 * The whole run: build and start every app (its own fresh database, workers, this tool's Redis
 * database, no gateway), make records, fuzz every target, stop everything, and answer the report.
 */
export async function runFuzz(o: RunOptions): Promise<{ report: FuzzReport; text: string }> {
  const log = o.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const t0 = Date.now();
  const platform = await startPlatform({
    portOffset: PORT_OFFSET,
    redisUrl: REDIS_URL,
    label: 'fuzz',
    build: o.build,
    env: { OPSFLOW_INGEST_TOKENS: INGEST_TOKEN, OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1' },
  });
  log(`platform up in ${((Date.now() - t0) / 1000).toFixed(1)} s (${platform.apps.join(', ')}); logs in ${platform.dir}`);
  const csv = await startCsvServer(CSV_PORT);
  try {
    const h = new Harness(platform, { timeoutMs: o.timeoutMs });
    const pools = await setup(h, csv.url, log, csv.echo);
    const env: GenEnv = { pools, csvUrl: csv.url, echo: csv.echo };
    const targets = await discoverTargets(h);
    log(`setup done in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${targets.length} targets; ids ${pools.summary()}`);
    const report = await fuzz(h, env, targets, { ...o, log });
    const command = o.command ?? 'npm run fuzz --';
    const text = formatReport(report, (f) =>
      f.corpus ? `${command} --op ${f.target} --runs 0   (the corpus case "${f.corpus}")` : `${command} --seed ${o.seed} --op ${f.target} --case ${f.caseIndex}`,
    );
    return { report, text };
  } finally {
    await csv.close();
    await platform.stop();
  }
}
