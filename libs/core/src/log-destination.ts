import { write, writeSync } from 'node:fs';

export interface LineBufferOptions {
  /** Bytes (roughly: string lengths) gathered before a write is started. */
  minLength?: number;
  /** Past this many bytes waiting (the output is stuck), new lines are dropped and counted. */
  maxBuffered?: number;
  /** After an EAGAIN (a full non-blocking pipe), wait this long before trying again. */
  retryMs?: number;
}

/**
 * The logs' destination: lines gathered in memory and written to a file descriptor (stdout) by one
 * asynchronous write at a time, each of everything gathered so far, off the request's path.
 *
 * pino's own buffered destination (sonic-boom) appends each line to a growing string and measures that
 * string's UTF-8 length on every line, which copies the buffer each time: ~2.3 µs a line at 4 KiB,
 * against ~0.4 µs here (issue #22; tools/bench/identity-project-group.mjs).
 *
 * Bounded: past `maxBuffered` (8 MiB) waiting, because the reader of stdout is stuck, lines are
 * dropped and counted, and once the output moves again a line says how many were lost. A partial
 * write continues with the rest; EAGAIN is retried after `retryMs`; any other error (EPIPE: no reader)
 * drops what was being written. `flushSync` (at exit) writes what is left before the process ends.
 */
export class LineBuffer {
  private chunks: string[] = [];
  private length = 0;
  /** What is being written (a write is under way, or waits to retry after EAGAIN). */
  private pending: Buffer | undefined;
  private dropped = 0;
  private readonly minLength: number;
  private readonly maxBuffered: number;
  private readonly retryMs: number;

  constructor(
    private readonly fd: number,
    o: LineBufferOptions = {},
  ) {
    this.minLength = o.minLength ?? 16 * 1024;
    this.maxBuffered = o.maxBuffered ?? 8 * 1024 * 1024;
    this.retryMs = o.retryMs ?? 100;
  }

  /** Takes one or more whole lines. Never throws, never blocks. */
  write(text: string): boolean {
    if (this.length + text.length > this.maxBuffered) {
      this.dropped++;
      return false;
    }
    this.chunks.push(text);
    this.length += text.length;
    if (!this.pending && this.length >= this.minLength) this.flush();
    return true;
  }

  /** Starts writing what is gathered, unless a write is under way (its end starts the next one). */
  flush(): void {
    if (this.pending || (!this.length && !this.dropped)) return;
    this.writeNext(this.take());
  }

  /** Writes everything gathered now, synchronously (at exit). */
  flushSync(): void {
    const parts: Buffer[] = [];
    if (this.pending) parts.push(this.pending);
    this.pending = undefined; // an asynchronous write under way may have written some of it: written again
    if (this.length || this.dropped) parts.push(this.take());
    let data = Buffer.concat(parts);
    for (let tries = 0; data.length && tries < 100; tries++) {
      try {
        data = data.subarray(writeSync(this.fd, data));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
  }

  private take(): Buffer {
    if (this.dropped) {
      this.chunks.push(`${JSON.stringify({ level: 'warn', time: new Date().toISOString(), msg: 'log lines dropped: the output was not read', dropped: this.dropped })}\n`);
      this.dropped = 0;
    }
    const data = Buffer.from(this.chunks.length === 1 ? this.chunks[0] : this.chunks.join(''));
    this.chunks = [];
    this.length = 0;
    return data;
  }

  private writeNext(data: Buffer): void {
    this.pending = data;
    write(this.fd, data, 0, data.length, null, (err, written) => {
      if (this.pending !== data) return; // flushSync wrote it meanwhile
      if (err && err.code === 'EAGAIN') {
        setTimeout(() => this.pending === data && this.writeNext(data), this.retryMs).unref();
        return;
      }
      const rest = err ? undefined : data.subarray(written);
      if (rest?.length) return this.writeNext(rest);
      this.pending = undefined;
      if (this.length >= this.minLength) this.flush();
    });
  }
}
