/**
 * Groups items submitted one by one into batches written together (group commit): a batch is
 * flushed when it is full, or `maxWaitMs` after its first item (0: on the next turn of the event
 * loop), with at most `maxInFlight` flushes at a time — while they run, newcomers gather into the
 * next batch, so batches grow with the load and stay small (no waiting) when it is light.
 *
 * `write` either throws (the whole batch failed) or returns, per item, its error or undefined.
 * With `retrySingly`, a batch that throws is written again one item at a time, so one bad item
 * fails only itself.
 */
export interface BatcherOptions<T> {
  maxSize: number;
  maxWaitMs: number;
  maxInFlight?: number;
  retrySingly?: boolean;
  /** The weight of an item (its bytes, say) and the most a batch may weigh; a heavier item goes alone. */
  weigh?: (item: T) => number;
  maxWeight?: number;
}

interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Per item of a batch: its error, or undefined when it was written. */
export type ItemFailures = unknown[];
export type BatchWrite<T> = (items: T[]) => Promise<ItemFailures | void>;

export class Batcher<T> {
  private pending: Pending<T>[] = [];
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private readonly maxInFlight: number;

  constructor(
    private readonly write: BatchWrite<T>,
    private readonly o: BatcherOptions<T>,
  ) {
    this.maxInFlight = o.maxInFlight ?? 1;
  }

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.o.maxSize) this.kick();
      else this.schedule();
    });
  }

  private schedule() {
    if (this.scheduled || !this.pending.length) return;
    this.scheduled = true;
    if (this.o.maxWaitMs > 0) this.timer = setTimeout(() => this.kick(), this.o.maxWaitMs);
    else setImmediate(() => this.kick());
  }

  private take(): Pending<T>[] {
    const { weigh, maxWeight = Infinity } = this.o;
    let n = Math.min(this.pending.length, this.o.maxSize);
    if (weigh) {
      let weight = 0;
      for (let i = 0; i < n; i++) {
        weight += weigh(this.pending[i].item);
        if (weight > maxWeight && i > 0) n = i;
      }
    }
    return this.pending.splice(0, n);
  }

  private kick() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = false;
    while (this.inFlight < this.maxInFlight && this.pending.length) {
      const batch = this.take();
      this.inFlight++;
      void this.flush(batch).finally(() => {
        this.inFlight--;
        if (this.pending.length >= this.o.maxSize) this.kick();
        else this.schedule();
      });
    }
  }

  private async flush(batch: Pending<T>[]) {
    try {
      const failures = await this.write(batch.map((b) => b.item));
      batch.forEach((b, i) => (failures?.[i] === undefined ? b.resolve() : b.reject(failures[i])));
    } catch (e) {
      if (!this.o.retrySingly || batch.length === 1) return batch.forEach((b) => b.reject(e));
      for (const b of batch) await this.flush([b]);
    }
  }
}
