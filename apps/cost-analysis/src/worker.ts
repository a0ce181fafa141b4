import './worker-telemetry';
import { createLogger } from '@platform/core';
import { onShutdownSignal, runMain, serveWorkerMetrics, workerMetricsPort } from '@platform/http';
import { startCollectionWorker } from './collector/worker';
import { startScheduler } from './data-source/scheduler';
import { loadConfig } from './config';
import { createDeps } from './runtime';

/** The cost collection worker: its own process (dist/apps/cost-analysis/worker.js). */
async function main() {
  const config = loadConfig();
  const logger = createLogger('cost-analysis-worker');
  const { deps, queueConnection, close } = createDeps(config, logger, 'worker');
  const running = startCollectionWorker(deps, queueConnection);
  const scheduler = startScheduler(deps, queueConnection);
  // /metrics on METRICS_PORT (the app's port + 1000): the collection's and the scheduler's queues and jobs.
  const metrics = await serveWorkerMetrics({
    service: 'cost-analysis-worker',
    port: workerMetricsPort(config.port),
    logger,
    queues: [deps.queue, scheduler.queue],
    workers: [running.worker, scheduler.worker],
  });
  logger.info({ concurrency: config.worker.concurrency }, 'cost collection worker started');
  onShutdownSignal(logger, async () => {
    metrics.close();
    await scheduler.close();
    await running.close();
    await close();
  });
}

runMain('cost-analysis-worker', main);
