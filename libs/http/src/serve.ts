import type { Server } from 'node:http';
import type express from 'express';
import type { Logger } from '@platform/core';

/**
 * Listens, and on SIGINT/SIGTERM stops taking connections, lets in-flight requests finish, then runs
 * `onShutdown` (close pools, queues, Redis) and exits. Every app's and worker's main uses it.
 */
export function serve(app: express.Express, o: { port: number; logger: Logger; service: string; onShutdown?: () => Promise<unknown> }): Server {
  const server = app.listen(o.port, () => o.logger.info({ port: o.port }, `${o.service} listening`));
  onShutdownSignal(o.logger, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await o.onShutdown?.();
  });
  return server;
}

/** Runs `fn` once on the first SIGINT/SIGTERM, then exits; a second signal or 10 s forces the exit. */
export function onShutdownSignal(logger: Logger, fn: () => Promise<unknown>) {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), 10_000).unref();
    fn().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** The entry point's last line: a failure to start is printed and exits 1. */
export function runMain(service: string, main: () => Promise<unknown>) {
  main().catch((err) => {
    process.stderr.write(`${service} failed to start: ${err?.stack ?? err}\n`);
    process.exit(1);
  });
}
