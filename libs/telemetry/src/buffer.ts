// The bounded buffer between ended spans and an exporter: the SDK's BatchSpanProcessor's semantics
// (issue #31, third round) for the platform's own spans. A span is queued as it ends (dropped and
// counted when the queue is full); a batch of at most `maxExportBatchSize` spans is handed to the
// exporter once that many are queued, else `scheduledDelayMillis` after the first, one export at a time
// (each given `exportTimeoutMillis`); `forceFlush` exports everything queued, `shutdown` flushes and
// shuts the exporter down. Exports run outside any request's context (`outside`), so an export's socket
// does not keep a request's context alive.

/** What the buffer needs of an exporter: the SDK's SpanExporter (ReadableSpans in, a result code back). */
export interface BatchExporter<S> {
  export(spans: S[], done: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
}

export interface BufferOptions {
  /** OTEL_BSP_MAX_QUEUE_SIZE: 2048 by default. */
  maxQueueSize?: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 512 by default, at most the queue's size. */
  maxExportBatchSize?: number;
  /** OTEL_BSP_SCHEDULE_DELAY: 5000 ms by default. */
  scheduledDelayMillis?: number;
  /** OTEL_BSP_EXPORT_TIMEOUT: 30000 ms by default. */
  exportTimeoutMillis?: number;
}

/** The OTEL_BSP_* variables as the SDK reads them: a number ≥ 0, else the default. */
export function bufferOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): BufferOptions {
  const read = (name: string) => {
    const raw = (env[name] ?? '').trim();
    const n = raw === '' ? NaN : Number(raw);
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  return {
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
  };
}

export interface BufferHooks {
  /** Runs an export outside any request's context (the API's ROOT_CONTEXT). */
  outside?: <T>(fn: () => T) => T;
  /** Before a batch is exported (the resource's pending attributes), if anything is pending. */
  ready?: () => Promise<unknown> | undefined;
  /** A diagnostic line (spans dropped, an export failed): the SDK's diag logger. */
  warn?: (message: string) => void;
}

export class SpanBuffer<S> {
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduledDelayMillis: number;
  readonly exportTimeoutMillis: number;
  /** Spans dropped because the queue was full, since the start. */
  dropped = 0;
  /** Spans handed to the exporter, since the start (whatever the export's result). */
  exported = 0;
  private queue: S[] = [];
  private exporting = false;
  private timer: NodeJS.Timeout | undefined;
  private droppedUnreported = 0;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly exporter: BatchExporter<S>,
    options: BufferOptions = {},
    private readonly hooks: BufferHooks = {},
  ) {
    this.maxQueueSize = options.maxQueueSize ?? 2048;
    this.maxExportBatchSize = Math.min(options.maxExportBatchSize ?? 512, this.maxQueueSize);
    this.scheduledDelayMillis = options.scheduledDelayMillis ?? 5000;
    this.exportTimeoutMillis = options.exportTimeoutMillis ?? 30000;
  }

  /** The spans queued, not yet handed to the exporter. */
  get queued(): number {
    return this.queue.length;
  }

  /** Queues an ended span: dropped (and counted) when the queue is full or the buffer shut down. */
  add(span: S): void {
    if (this.closed) return;
    if (this.queue.length >= this.maxQueueSize) {
      this.dropped++;
      this.droppedUnreported++;
      return;
    }
    if (this.droppedUnreported > 0) {
      this.hooks.warn?.(`Dropped ${this.droppedUnreported} spans because the span queue (OTEL_BSP_MAX_QUEUE_SIZE ${this.maxQueueSize}) was full`);
      this.droppedUnreported = 0;
    }
    this.queue.push(span);
    this.schedule();
  }

  /** Exports everything queued now (in batches of at most maxExportBatchSize). */
  async forceFlush(): Promise<void> {
    this.clearTimer();
    const batches: Promise<void>[] = [];
    while (this.queue.length > 0) batches.push(this.exportOne());
    await Promise.all(batches);
  }

  /** Flushes what is queued, then shuts the exporter down; spans ended later are dropped. Once. */
  shutdown(): Promise<void> {
    return (this.closed ??= this.forceFlush()
      .catch(() => {})
      .then(() => this.exporter.shutdown()));
  }

  private schedule() {
    if (this.exporting) return;
    if (this.queue.length >= this.maxExportBatchSize) return this.flushInTurn();
    if (this.timer !== undefined) return;
    const start = () => setTimeout(() => this.flushInTurn(), this.scheduledDelayMillis).unref();
    this.timer = this.hooks.outside ? this.hooks.outside(start) : start();
  }

  /** One batch, then the next in turn if enough are queued (or the timer for the rest). */
  private flushInTurn() {
    this.exporting = true;
    this.exportOne()
      .catch((e: Error) => this.hooks.warn?.(`span export failed: ${e?.message ?? e}`))
      .finally(() => {
        this.exporting = false;
        if (this.queue.length > 0) {
          this.clearTimer();
          this.schedule();
        }
      });
  }

  private exportOne(): Promise<void> {
    this.clearTimer();
    if (this.queue.length === 0) return Promise.resolve();
    const batch = this.queue.length <= this.maxExportBatchSize ? this.queue : this.queue.slice(0, this.maxExportBatchSize);
    this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
    this.exported += batch.length;
    const run = () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('Timeout')), this.exportTimeoutMillis);
        const send = () =>
          this.exporter.export(batch, (result) => {
            clearTimeout(timer);
            if (result.code === 0) resolve();
            else reject(result.error ?? new Error('span export failed'));
          });
        const pending = this.hooks.ready?.();
        if (pending) pending.then(send, reject);
        else send();
      });
    return this.hooks.outside ? this.hooks.outside(run) : run();
  }

  private clearTimer() {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
