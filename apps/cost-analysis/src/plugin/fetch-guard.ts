import type { Readable } from 'node:stream';
import { PluginError } from './types';

/** What a fetched body may take (issue #32): a source that trickles, stalls or never ends loses its slot. */
export interface BodyLimits {
  /** The whole body must have arrived within this time from the start of the read. */
  timeoutMs: number;
  /** Bytes a second the source must send, over each window of time spent waiting for it. */
  minBytesPerSecond: number;
  rateWindowMs: number;
  /** Bytes of the body. */
  maxBytes: number;
}

const TIMED_OUT = Symbol('timed out');

/**
 * A fetched body's bytes, guarded: past `maxBytes`, past `timeoutMs`, or slower than
 * `minBytesPerSecond` over a window of `rateWindowMs`, the read fails at once (a PluginError naming the
 * bound, no retry: the source would do it again) and the response is destroyed. The rate counts only
 * the time spent waiting for the source, not the time the consumer (parse, COPY) keeps it waiting, so a
 * slow database never fails a fast source. Messages name the bound, never the bytes read nor how many.
 */
export async function* guardBody(body: Readable, limits: BodyLimits, now: () => number = Date.now): AsyncGenerator<Buffer> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const deadline = now() + limits.timeoutMs;
  const minWindowBytes = (limits.minBytesPerSecond * limits.rateWindowMs) / 1000;
  let total = 0;
  let windowBytes = 0;
  let windowWait = 0;
  let pending: Promise<IteratorResult<Buffer>> | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      const t0 = now();
      if (t0 >= deadline) throw tooSlow(`the file did not arrive within ${limits.timeoutMs / 1000} s (FETCH_TIMEOUT_SECONDS)`);
      pending ??= it.next();
      pending.catch(() => {}); // read below, or abandoned when the guard fails
      const budget = Math.max(1, Math.min(deadline - t0, limits.rateWindowMs - windowWait));
      const r = await Promise.race([pending, new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), budget)))]);
      clearTimeout(timer);
      windowWait += now() - t0;
      if (r !== TIMED_OUT) pending = undefined;
      if (r !== TIMED_OUT && r.done) return;
      if (r !== TIMED_OUT) {
        total += r.value.length;
        windowBytes += r.value.length;
        if (total > limits.maxBytes) throw new PluginError('ERROR_COLLECT_LIMIT', `The file is larger than ${limits.maxBytes} bytes (COLLECT_MAX_BYTES).`);
      }
      if (windowWait >= limits.rateWindowMs) {
        if (windowBytes < minWindowBytes) {
          throw tooSlow(`the source was slower than ${limits.minBytesPerSecond} bytes/s over ${limits.rateWindowMs / 1000} s (FETCH_MIN_BYTES_PER_SECOND)`);
        }
        windowBytes = 0;
        windowWait = 0;
      }
      if (r !== TIMED_OUT) yield r.value;
    }
  } finally {
    clearTimeout(timer);
    body.destroy();
  }
}

function tooSlow(reason: string) {
  return new PluginError('ERROR_FETCH_TOO_SLOW', `Fetching the file stopped: ${reason}.`);
}
