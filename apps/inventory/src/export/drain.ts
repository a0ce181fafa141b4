import type { Writable } from 'node:stream';

/** Resolves when `out` can take more; rejects when it closes first (the client went away). */
export function drained(out: Writable): Promise<void> {
  if (out.destroyed || out.writableEnded) return Promise.reject(new Error('output closed'));
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('close', onClose);
      out.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('output closed'));
    out.on('drain', onDrain);
    out.on('close', onClose);
    out.on('error', done);
  });
}

/**
 * Writes `data` and resolves once `out` has consumed it (handed it on: the caller may then reuse the
 * buffer); rejects when `out` closes first.
 */
export function written(out: Writable, data: Buffer): Promise<void> {
  if (out.destroyed || out.writableEnded) return Promise.reject(new Error('output closed'));
  return new Promise((resolve, reject) => {
    const done = (err?: Error | null) => {
      out.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onClose = () => done(new Error('output closed'));
    out.on('close', onClose);
    out.write(data, done);
  });
}
