/**
 * Groups items submitted one by one (one per BullMQ job) into batches written together: a batch is
 * flushed when it is full or `maxWaitMs` after its first item, one flush at a time. If a batch fails,
 * its items are retried one by one, so one bad item fails only its own job.
 */
interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class Batcher<T> {
  private pending: Pending<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<unknown>,
    private readonly maxSize: number,
    private readonly maxWaitMs: number,
  ) {}

  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxSize) this.kick();
      else this.timer ??= setTimeout(() => this.kick(), this.maxWaitMs);
    });
  }

  private kick() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing || !this.pending.length) return;
    const batch = this.pending.splice(0, this.maxSize);
    this.flushing = true;
    this.flush(batch).finally(() => {
      this.flushing = false;
      if (this.pending.length >= this.maxSize) this.kick();
      else if (this.pending.length) this.timer ??= setTimeout(() => this.kick(), this.maxWaitMs);
    });
  }

  private async flush(batch: Pending<T>[]) {
    try {
      await this.write(batch.map((b) => b.item));
      for (const b of batch) b.resolve();
    } catch (e) {
      if (batch.length === 1) return batch[0].reject(e);
      for (const b of batch) {
        try {
          await this.write([b.item]);
          b.resolve();
        } catch (err) {
          b.reject(err);
        }
      }
    }
  }
}
