// SQL spans made by the pool itself (issue #31): the pool and tracing in a process of their own
// (trace.fixture.ts, bundled as the apps are), exporting OTLP/HTTP JSON to a real receiver; a real database.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleEntry, createTempDatabase, otlpEnv, otlpReceiver, spanAttribute, spanText, waitFor, type OtlpSpan } from '@platform/testing';

const ROOT = path.resolve(__dirname, '../../..');

describe('SQL spans of the pool', () => {
  it("makes one span per statement under the operation that ran it, with the text's placeholders and never a value or an error's message, even racing for one connection, and none for a statement outside them handed their connection", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'db-trace-'));
    const receiver = await otlpReceiver();
    const db = await createTempDatabase();
    try {
      const file = bundleEntry(path.join(__dirname, 'trace.fixture.ts'), path.join(dir, 'fixture.js'));
      const secret = `secret-${randomBytes(8).toString('hex')}`;
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const run = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8', env: { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), ...otlpEnv(receiver), DATABASE_URL: db.url, SECRET: secret } });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      await waitFor(async () => receiver.spans.some((s) => s.name === 'op 3'), 5000, 'the spans');

      const text = (s: OtlpSpan) => spanAttribute(s, 'db.query.text') ?? '';
      const sql = receiver.spans.filter((s) => spanAttribute(s, 'db.system.name') === 'postgresql');
      expect(sql.some((s) => text(s).includes('outside'))).toBe(false);
      for (const n of [1, 2]) {
        const op = receiver.spans.find((s) => s.name === `op ${n}`)!;
        const mine = sql.filter((s) => s.parentSpanId === op.spanId);
        expect(mine.map(text).sort()).toEqual([`SELECT $1::int AS bad${n}`, `SELECT $1::text AS v${n}, pg_sleep(0.05)`]);
        expect(mine.every((s) => s.kind === 3 && s.traceId === op.traceId)).toBe(true);
        expect(spanAttribute(mine.find((s) => text(s).includes('bad'))!, 'error.type')).toBe('22P02');
      }
      const op3 = receiver.spans.find((s) => s.name === 'op 3')!;
      expect(sql.filter((s) => s.parentSpanId === op3.spanId).map(text)).toEqual([`SELECT $1::text AS v3, pg_sleep(0.05)`]);
      expect(sql.filter((s) => /waiting|later/.test(text(s)))).toEqual([]);
      expect(sql).toHaveLength(5);
      expect(receiver.bodies.join('\n')).not.toContain(secret);
      for (const s of receiver.spans) expect(spanText(s)).not.toContain(secret);
    } finally {
      receiver.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
