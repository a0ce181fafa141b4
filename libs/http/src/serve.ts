import { createServer, type Server } from 'node:http';
import type express from 'express';
import { collectGarbageWhenIdle, envInt, type Logger } from '@platform/core';
import { shutdownTelemetry } from '@platform/telemetry';

/**
 * The HTTP server's time limits, set on purpose rather than left at Node's defaults (milliseconds):
 * - `HTTP_HEADERS_TIMEOUT_MS` (20 000): a client has this long to send a request's headers (slowloris);
 * - `HTTP_REQUEST_TIMEOUT_MS` (60 000): ... and the whole request, body included;
 * - `HTTP_KEEP_ALIVE_TIMEOUT_MS` (65 000): an idle keep-alive connection is closed after this; longer
 *   than the gateway's upstream keep-alive (nginx: 60 s) so that the gateway, not the app, closes
 *   first and never sends a request on a connection the app is closing;
 * - `HTTP_SOCKET_TIMEOUT_MS` (120 000): a connection with no traffic at all (a stalled download) is closed;
 * - `HTTP_MAX_CONNECTIONS` (2 000): connections one process holds open at once; past it a new one is
 *   closed at once (issue #23: a flood of idle connections cannot exhaust the process's descriptors).
 * Node checks the first two every `connectionsCheckingInterval` (2 s here, 30 s by default).
 */
export function httpTimeouts() {
  return {
    headersTimeout: envInt('HTTP_HEADERS_TIMEOUT_MS', 20_000),
    requestTimeout: envInt('HTTP_REQUEST_TIMEOUT_MS', 60_000),
    keepAliveTimeout: envInt('HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000),
    socketTimeout: envInt('HTTP_SOCKET_TIMEOUT_MS', 120_000),
    maxConnections: envInt('HTTP_MAX_CONNECTIONS', 2_000),
  };
}

/** The app's HTTP server with httpTimeouts() (or `t`), not yet listening. */
export function createHttpServer(app: express.Express, t: Omit<ReturnType<typeof httpTimeouts>, 'maxConnections'> & { maxConnections?: number } = httpTimeouts()): Server {
  const server = createServer(
    { headersTimeout: t.headersTimeout, requestTimeout: t.requestTimeout, keepAliveTimeout: t.keepAliveTimeout, connectionsCheckingInterval: 2_000 },
    app,
  );
  server.keepAliveTimeout = t.keepAliveTimeout;
  if (t.maxConnections) server.maxConnections = t.maxConnections;
  server.setTimeout(t.socketTimeout, (socket) => socket.destroy());
  return server;
}

/**
 * The address an app listens on: `HOST` when set (`npm start` sets 127.0.0.1: a local platform is
 * reached through its gateway only); unset, every interface, as a pod or a container needs (the
 * gateway reaches it over the cluster network). In production the NetworkPolicy in
 * k8s/base/network-policy.yaml keeps the app ports inside the cluster: only the gateway (the ingress
 * controller) and Prometheus reach them (issue #32; docs/decisions/deployment.md).
 */
export function listenHost(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.HOST?.trim() || undefined;
}

/**
 * Listens (on listenHost()), and on SIGINT/SIGTERM stops taking connections, lets in-flight requests
 * finish, then runs `onShutdown` (close pools, queues, Redis) and exits. Every app's main uses it.
 */
export function serve(app: express.Express, o: { port: number; host?: string; logger: Logger; service: string; onShutdown?: () => Promise<unknown> }): Server {
  const server = createHttpServer(app);
  const host = o.host ?? listenHost();
  server.listen(o.port, host, () => o.logger.info({ port: o.port, host: host ?? 'every interface' }, `${o.service} listening`));
  onShutdownSignal(o.logger, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await o.onShutdown?.();
  });
  return server;
}

/**
 * Runs `fn` once on the first SIGINT/SIGTERM, exports the spans still buffered (when tracing is on),
 * then exits; a second signal or 10 s forces the exit.
 */
export function onShutdownSignal(logger: Logger, fn: () => Promise<unknown>) {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), 10_000).unref();
    fn().then(
      () => shutdownTelemetry().then(() => process.exit(0)),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * The entry point's last line: a failure to start is printed and exits 1. A promise rejected with
 * nobody listening (a background refresh, a timer's callback) is written to stderr and the process
 * carries on, rather than Node's default of exiting: one failed background task must not take every
 * request down with it. An uncaught exception still exits (the state is unknown); the supervisor
 * (`npm start`, Kubernetes) restarts the process. Once `main` has resolved, `collectGarbageWhenIdle`
 * runs for the life of the process.
 */
export function runMain(service: string, main: () => Promise<unknown>) {
  process.on('unhandledRejection', (reason) => {
    const text = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
    process.stderr.write(`${JSON.stringify({ level: 'error', service, msg: 'unhandled rejection', err: text.slice(0, 2000) })}\n`);
  });
  main().then(
    // Started: from now on the process gives back its start's garbage (and a load's) once it is quiet.
    () => collectGarbageWhenIdle(),
    (err) => {
      process.stderr.write(`${service} failed to start: ${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
