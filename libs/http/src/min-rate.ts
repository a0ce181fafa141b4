import type { ServerResponse } from 'node:http';

export interface MinRate {
  /** The slowest a client may take the bytes waiting for it. 0 turns the check off. */
  bytesPerSecond: number;
  /** Measured over this long (milliseconds): a reader below the rate for one window loses its connection. */
  windowMs: number;
}

/** Checks per window: a stall is seen within a window and a quarter. */
const TICKS_PER_WINDOW = 4;

/**
 * Cuts the connection of a response whose client reads slower than `rate` (issue #32): a long download
 * (an export) holds resources while it streams, and a client that stops reading would otherwise hold
 * them until the socket timeout. Only time when bytes wait for the client counts (the socket's own
 * buffer is not empty: the kernel's buffers are full); a server slow to produce is not the client's
 * fault. Over every stretch of `windowMs` during which bytes kept waiting, the client must have taken
 * `bytesPerSecond` on average, or the socket is destroyed (the writer then sees the output closed and
 * gives its resources back) and `onSlow` is told how many bytes it took. Returns a function that stops
 * the check; it also stops when the response closes.
 */
export function enforceMinRate(res: ServerResponse, rate: MinRate, onSlow?: (taken: number, ms: number) => void): () => void {
  const socket = res.socket;
  if (!socket || rate.bytesPerSecond <= 0 || rate.windowMs <= 0) return () => {};
  // Bytes the kernel has taken: written minus what still waits for it. libuv's queue counts to the byte
  // (a large write the kernel took half of counts half); without it, the stream's whole pending writes.
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: unknown } })._handle;
  const waiting = () => (typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : socket.writableLength);
  const taken = () => (socket.bytesWritten ?? 0) - waiting();
  let since: { at: number; taken: number } | undefined;
  const check = () => {
    if (socket.destroyed) return stop();
    const now = Date.now();
    if (socket.writableLength === 0) {
      since = undefined; // nothing waits for the client: the server is the slow one, or all is well
      return;
    }
    if (!since) {
      since = { at: now, taken: taken() };
      return;
    }
    const ms = now - since.at;
    if (ms < rate.windowMs) return;
    const got = taken() - since.taken;
    if (got < (rate.bytesPerSecond * ms) / 1000) {
      stop();
      onSlow?.(got, ms);
      socket.destroy();
      return;
    }
    since = { at: now, taken: taken() };
  };
  const timer = setInterval(check, Math.max(1, Math.floor(rate.windowMs / TICKS_PER_WINDOW)));
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    res.off('close', stop);
  };
  res.on('close', stop);
  return stop;
}
