import './worker-telemetry';
import { createLogger } from '@platform/core';
import { createPool } from '@platform/db';
import { onShutdownSignal, runMain, serveWorkerMetrics, workerMetricsPort } from '@platform/http';
import { createQueue, createQueueConnection, gracefulShutdown } from '@platform/queue';
import { loadConfig } from './config';
import { startDeliveryWorker } from './ingest/worker-runtime';
import { pluginDatabaseUrl, startPublishedPlugins } from '@platform/plugin';
import { createDirectoryRedis } from './queues';

/** monitoring's worker process: parses accepted webhook deliveries and stores their events. */
async function main() {
  const config = loadConfig();
  const logger = createLogger('monitoring-worker');
  // A worker's statements may run long (role worker). A Postgres or Redis restart fails the jobs in
  // flight, which run again once it is back (see startDeliveryWorker); the clients reconnect by themselves.
  const pool = createPool(config.databaseUrl, { role: 'worker', logger });
  const connection = createQueueConnection(config.redisUrl, { logger });
  // Published plugins parse their webhooks' deliveries (the resolver subscribes on a Redis connection of its own).
  const redis = createDirectoryRedis(config.redisUrl, logger);
  // Published plugins: PLUGIN_DATABASE_URL, else platform_plugin on monitoring's own server.
  const remote = startPublishedPlugins(pluginDatabaseUrl(process.env, config.databaseUrl), redis, logger);
  const worker = startDeliveryWorker({ config, pool, connection, prefix: config.ingest.queuePrefix, logger, plugins: remote });
  await worker.waitUntilReady();
  // /metrics on METRICS_PORT (the app's port + 1000): the delivery queue's jobs, the batches' run times and failures.
  const queue = createQueue(config.ingest.queue, { connection, prefix: config.ingest.queuePrefix, logger });
  const metrics = await serveWorkerMetrics({ service: 'monitoring-worker', port: workerMetricsPort(config.port), logger, queues: [queue], workers: [worker] });
  logger.info({ queue: config.ingest.queue, concurrency: config.worker.concurrency }, 'monitoring worker started');
  process.stdout.write(`worker ready ${process.pid}\n`);
  const close = gracefulShutdown({ workers: [worker], queues: [queue], connections: [connection] });
  onShutdownSignal(logger, async () => {
    metrics.close();
    await close();
    await remote.close();
    redis.disconnect();
    await pool.end().catch(() => {});
  });
}

runMain('monitoring-worker', main);
