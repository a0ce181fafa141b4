import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout. LOG_LEVEL sets the level (default info; silent in tests unless set). */
export function createLogger(name: string, level = process.env.LOG_LEVEL): Logger {
  const fallback = process.env.JEST_WORKER_ID ? 'silent' : 'info';
  return pino({
    name,
    level: level || fallback,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
