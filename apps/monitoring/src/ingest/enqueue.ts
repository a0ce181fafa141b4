import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Logger } from '@platform/core';
import { errors } from '@platform/errors';
import type { Queue } from '@platform/queue';
import { Batcher, type ItemFailures } from './batcher';
import { DELIVERY_BATCH_JOB_NAME, DELIVERY_JOB_OPTIONS, type DeliveryJob, type QueuedDeliveries } from './job';
import { markNotAccepted } from './store';

export interface EnqueueOptions {
  /** How long a delivery waits for Redis before it is refused (503). */
  timeoutMs: number;
  /** Deliveries per queued job at most, and their bytes at most (a bigger delivery goes alone). */
  maxBatch: number;
  maxBatchBytes: number;
}

const unavailable = () => errors.unavailable('Event queue unavailable; the delivery was not accepted, retry later.');

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]);
}

interface Queued {
  delivery: DeliveryJob;
  bytes: number;
}

/**
 * The producer side of ingestion. Deliveries accepted at about the same time go to Redis together,
 * as one job (group commit: the first one goes at once, those arriving while it is on its way go
 * in the next job), so a busy replica makes one Redis call for many requests.
 *
 * `enqueue` resolves only once the job holding the delivery is in Redis; otherwise it throws 503
 * and the delivery is never processed: when the outcome of the add is unknown (Redis died before
 * answering, or answered after the timeout) the delivery is settled in Postgres before anyone is
 * answered (see `markNotAccepted`).
 */
export class DeliveryEnqueuer {
  private readonly batcher: Batcher<Queued>;

  constructor(
    private readonly queue: Queue<QueuedDeliveries>,
    private readonly pool: Pool,
    private readonly o: EnqueueOptions,
    private readonly logger: Logger,
    /** False while the queue's Redis connection is down: refuse at once. */
    private readonly ready: () => boolean,
  ) {
    this.batcher = new Batcher<Queued>((items) => this.add(items.map((i) => i.delivery)), {
      maxSize: o.maxBatch,
      maxWaitMs: 0,
      maxInFlight: 2,
      weigh: (i) => i.bytes,
      maxWeight: o.maxBatchBytes,
    });
  }

  /** `bytes`: about how big the payload is (the posted body's length). */
  async enqueue(delivery: DeliveryJob, bytes: number): Promise<void> {
    if (!this.ready()) throw unavailable();
    await this.batcher.submit({ delivery, bytes });
  }

  private async add(deliveries: DeliveryJob[]): Promise<ItemFailures | void> {
    try {
      await withTimeout(this.queue.add(DELIVERY_BATCH_JOB_NAME, { deliveries }, { jobId: randomUUID(), ...DELIVERY_JOB_OPTIONS }), this.o.timeoutMs);
      return;
    } catch (e) {
      this.logger.error({ err: (e as Error).message, deliveries: deliveries.length }, 'enqueue failed');
    }
    let refused: Set<string>;
    try {
      refused = await markNotAccepted(this.pool, deliveries);
    } catch (e) {
      // Postgres is out too: refuse. If Redis did take the job, a retried delivery is stored twice.
      this.logger.error({ err: (e as Error).message, delivery_ids: deliveries.map((d) => d.delivery_id) }, 'deliveries refused but not settled: may be stored twice');
      return deliveries.map(() => unavailable());
    }
    return deliveries.map((d) => (refused.has(d.delivery_id) ? unavailable() : undefined));
  }
}
