// The span buffer (issue #31, third round): the BatchSpanProcessor's semantics for the platform's own
// spans, driven with an exporter that records each batch and answers when the test says so.
import { SpanBuffer, bufferOptionsFromEnv, type BatchExporter } from './buffer';

interface Recorder extends BatchExporter<number> {
  batches: number[][];
  pending: ((result: { code: number; error?: Error }) => void)[];
  shutdowns: number;
}

/** An exporter recording each batch; `answer` 'now' calls back at once, 'later' leaves it in `pending`. */
function recorder(answer: 'now' | 'later'): Recorder {
  const r: Recorder = {
    batches: [],
    pending: [],
    shutdowns: 0,
    export(spans, done) {
      r.batches.push([...spans]);
      if (answer === 'now') done({ code: 0 });
      else r.pending.push(done);
    },
    shutdown: async () => {
      r.shutdowns++;
    },
  };
  return r;
}

const settle = () => new Promise((r) => setImmediate(r));
const until = async (cond: () => boolean, ms = 5000) => {
  for (const end = Date.now() + ms; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
  return cond();
};

describe('SpanBuffer', () => {
  it('drops and counts the spans that find the queue full, and reports them once room is back', async () => {
    const exporter = recorder('later');
    const warnings: string[] = [];
    const b = new SpanBuffer(exporter, { maxQueueSize: 4, maxExportBatchSize: 4, scheduledDelayMillis: 60_000 }, { warn: (m) => warnings.push(m) });
    for (let i = 0; i < 4; i++) b.add(i); // a full batch: handed to the exporter at once
    expect(exporter.batches).toEqual([[0, 1, 2, 3]]);
    for (let i = 4; i < 10; i++) b.add(i); // the export not answered yet: 4 queued, 2 dropped
    expect({ queued: b.queued, dropped: b.dropped, exported: b.exported }).toEqual({ queued: 4, dropped: 2, exported: 4 });
    expect(warnings).toEqual([]);
    exporter.pending.shift()!({ code: 0 });
    await settle();
    // The next batch goes as soon as the first is answered; a span added then is queued and the drops reported.
    expect(exporter.batches).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    b.add(10);
    expect(warnings).toEqual([expect.stringMatching(/^Dropped 2 spans because the span queue \(OTEL_BSP_MAX_QUEUE_SIZE 4\) was full/)]);
    expect({ queued: b.queued, dropped: b.dropped }).toEqual({ queued: 1, dropped: 2 });
    exporter.pending.shift()!({ code: 0 });
    const flushed = b.forceFlush();
    exporter.pending.shift()!({ code: 0 });
    await flushed;
    expect(exporter.batches.at(-1)).toEqual([10]);
  });

  it('hands the exporter batches of at most maxExportBatchSize, one export at a time, every span once', async () => {
    const exporter = recorder('now');
    const b = new SpanBuffer(exporter, { maxQueueSize: 100, maxExportBatchSize: 3, scheduledDelayMillis: 60_000 });
    for (let i = 0; i < 10; i++) b.add(i);
    await settle();
    // Three full batches went as they filled; the last span waits for the delay (or a flush).
    expect(exporter.batches).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7, 8],
    ]);
    expect(b.queued).toBe(1);
    await b.forceFlush();
    expect(exporter.batches.flat()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(Math.max(...exporter.batches.map((x) => x.length))).toBe(3);

    // forceFlush of a long queue: every span, in batches of at most the batch size.
    const slow = recorder('now');
    const c = new SpanBuffer(slow, { maxQueueSize: 100, maxExportBatchSize: 40, scheduledDelayMillis: 60_000 });
    const held = recorder('later');
    const d = new SpanBuffer(held, { maxQueueSize: 100, maxExportBatchSize: 40, scheduledDelayMillis: 60_000 });
    for (let i = 0; i < 39; i++) c.add(i);
    await c.forceFlush();
    expect(slow.batches.map((x) => x.length)).toEqual([39]);
    for (let i = 0; i < 100; i++) d.add(i); // 40 exported as they filled, 40 waiting on it, 20 queued
    const all = d.forceFlush();
    expect(held.batches.map((x) => x.length)).toEqual([40, 40, 20]);
    held.pending.forEach((done) => done({ code: 0 }));
    await all;
  });

  it('exports a partial batch after the schedule delay', async () => {
    const exporter = recorder('now');
    const b = new SpanBuffer(exporter, { scheduledDelayMillis: 20 });
    b.add(1);
    b.add(2);
    expect(exporter.batches).toEqual([]);
    expect(await until(() => exporter.batches.length > 0)).toBe(true);
    expect(exporter.batches).toEqual([[1, 2]]);
  });

  it('flushes everything on shutdown, shuts the exporter down once, and takes nothing after', async () => {
    const exporter = recorder('now');
    const b = new SpanBuffer(exporter, { scheduledDelayMillis: 60_000 });
    for (let i = 0; i < 5; i++) b.add(i);
    expect(exporter.batches).toEqual([]);
    await Promise.all([b.shutdown(), b.shutdown()]);
    expect(exporter.batches).toEqual([[0, 1, 2, 3, 4]]);
    expect(exporter.shutdowns).toBe(1);
    b.add(5);
    expect(b.queued).toBe(0);
    await b.forceFlush();
    expect(exporter.batches).toHaveLength(1);
  });

  it('gives up on an export that does not answer within the export timeout, and goes on with the next', async () => {
    const exporter = recorder('later');
    const warnings: string[] = [];
    const b = new SpanBuffer(exporter, { maxExportBatchSize: 2, exportTimeoutMillis: 20, scheduledDelayMillis: 60_000 }, { warn: (m) => warnings.push(m) });
    b.add(1);
    b.add(2); // exported at once, never answered
    b.add(3);
    b.add(4); // waits for the first export
    expect(await until(() => exporter.batches.length === 2)).toBe(true);
    expect(warnings).toContain('span export failed: Timeout');
    expect(exporter.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    // A failed export's result is an error too.
    exporter.pending[1]({ code: 1, error: new Error('refused') });
    expect(await until(() => warnings.includes('span export failed: refused'))).toBe(true);
  });

  it('reads OTEL_BSP_* as the SDK does (a number ≥ 0, else the default), the batch at most the queue', () => {
    expect(bufferOptionsFromEnv({})).toEqual({ maxQueueSize: undefined, maxExportBatchSize: undefined, scheduledDelayMillis: undefined, exportTimeoutMillis: undefined });
    expect(
      bufferOptionsFromEnv({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: ' 10 ', OTEL_BSP_SCHEDULE_DELAY: '0', OTEL_BSP_EXPORT_TIMEOUT: '-1' }),
    ).toEqual({ maxQueueSize: 100, maxExportBatchSize: 10, scheduledDelayMillis: 0, exportTimeoutMillis: undefined });
    expect(bufferOptionsFromEnv({ OTEL_BSP_MAX_QUEUE_SIZE: 'x', OTEL_BSP_SCHEDULE_DELAY: '' }).maxQueueSize).toBeUndefined();
    const d = new SpanBuffer(recorder('now'));
    expect([d.maxQueueSize, d.maxExportBatchSize, d.scheduledDelayMillis, d.exportTimeoutMillis]).toEqual([2048, 512, 5000, 30000]);
    expect(new SpanBuffer(recorder('now'), { maxQueueSize: 8, maxExportBatchSize: 512 }).maxExportBatchSize).toBe(8);
  });
});
