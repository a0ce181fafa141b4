import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON lines on stdout. LOG_LEVEL sets the level (default info; silent in tests unless set).
 * Lines are written through a buffered asynchronous destination (a write per ~4 KiB rather than per
 * line), flushed every half second and synchronously at exit, so logging stays off the request's path.
 */
export function createLogger(name: string, level = process.env.LOG_LEVEL): Logger {
  const inTests = Boolean(process.env.JEST_WORKER_ID);
  const options = {
    name,
    level: level || (inTests ? 'silent' : 'info'),
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (inTests || process.env.LOG_SYNC === 'true') return pino(options);
  const dest = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => dest.flush(), 500).unref();
  process.on('exit', () => {
    try {
      dest.flushSync();
    } catch {
      // nothing left to write to
    }
  });
  return pino(options, dest);
}
