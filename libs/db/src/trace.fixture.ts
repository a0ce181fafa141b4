// Run by trace.spec.ts as a process of its own (bundled as the apps are, tracing on from the OTEL_*
// variables): statements outside and inside two operations racing for a pool of one connection.
import { shutdownTelemetry, startTelemetry, withSpan } from '@platform/telemetry';
import { createPool } from './index';

async function main() {
  if (!startTelemetry('db-trace-fixture')) throw new Error('tracing is not configured');
  const pool = createPool(process.env.DATABASE_URL!, { max: 1 });
  const secret = process.env.SECRET!;
  await pool.query('SELECT $1::text AS outside', [secret]); // outside any operation: no span
  // The second operation is handed the connection from the first's release (pg-pool calls it back
  // there), yet its statements must stay under its own span.
  await Promise.all(
    [1, 2].map((n) =>
      withSpan(`op ${n}`, {}, async () => {
        await pool.query(`SELECT $1::text AS v${n}, pg_sleep(0.05)`, [secret]);
        const client = await pool.connect();
        try {
          await client.query(`SELECT $1::int AS bad${n}`, [secret]).catch(() => {}); // 22P02: its message quotes the value
        } finally {
          client.release();
        }
      }),
    ),
  );
  await pool.end();
  // A connection opened inside an operation, then handed from that operation's release to a statement
  // run outside any: that statement makes no span (it is not the operation's, whose context the
  // release and the connection's socket carry).
  const one = createPool(process.env.DATABASE_URL!, { max: 1 });
  const op3 = withSpan('op 3', {}, () => one.query(`SELECT $1::text AS v3, pg_sleep(0.05)`, [secret]));
  await new Promise((resolve) => setTimeout(resolve, 10));
  await Promise.all([op3, one.query(`SELECT $1::text AS waiting`, [secret])]); // waits for op 3's connection
  await one.query(`SELECT $1::text AS later`, [secret]); // outside, on the connection opened inside op 3
  await one.end();
  await shutdownTelemetry();
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${e?.stack ?? e}\n`);
    process.exit(1);
  },
);
