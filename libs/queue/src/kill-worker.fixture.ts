// Run as its own process by queue.spec.ts: takes one job, reports it started, then hangs until killed.
import { createQueueConnection, createWorker } from './index';

const connection = createQueueConnection(process.env.REDIS_URL!);
createWorker(
  process.env.QUEUE_NAME!,
  async (job) => {
    process.stdout.write(`started ${job.id}\n`);
    await new Promise(() => {});
  },
  { connection, prefix: process.env.QUEUE_PREFIX },
  { lockDuration: 1500, stalledInterval: 1000, concurrency: 1 },
);
