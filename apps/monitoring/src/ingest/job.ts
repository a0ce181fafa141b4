import type { TraceCarrier } from '@platform/telemetry';
import type { Struct, UpgradeMode } from '../plugins/registry';

/** The webhook as it was when a delivery was accepted: the worker needs nothing else to store it. */
export interface WebhookSnapshot {
  webhook_id: string;
  name: string;
  domain_id: string;
  workspace_id: string;
  project_id: string;
  plugin_id: string;
  version: string;
  upgrade_mode: UpgradeMode;
  options: Struct;
}

/** One accepted delivery. Its delivery_id is the worker's idempotency key (webhook_delivery's primary key). */
export interface DeliveryJob {
  delivery_id: string;
  received_at: string;
  webhook: WebhookSnapshot;
  data: Struct;
  /** While tracing is on: the trace of the request that accepted it (the worker's span continues it). */
  trace?: TraceCarrier;
  /** As DeliveryBatchJob's, for a job of one delivery. */
  plugin_waits?: number;
}

/**
 * One BullMQ job = the deliveries one replica accepted together (its micro-batch; often just one).
 * The job id is random: what makes a re-run harmless is each delivery's id, not the job's.
 */
export interface DeliveryBatchJob {
  deliveries: DeliveryJob[];
  /** How often the job waited for its webhook plugin (the backoff of the next wait). */
  plugin_waits?: number;
}

export const DELIVERY_BATCH_JOB_NAME = 'deliveries';
/** The job of one delivery, as replicas before the micro-batches queued it: still processed. */
export const DELIVERY_JOB_NAME = 'delivery';

export type QueuedDeliveries = DeliveryBatchJob | DeliveryJob;

/** The deliveries a job carries, whichever of the two job kinds it is. */
export function deliveriesOf(name: string, data: QueuedDeliveries): DeliveryJob[] {
  return name === DELIVERY_JOB_NAME ? [data as DeliveryJob] : (data as DeliveryBatchJob).deliveries;
}

/**
 * On top of the queue's defaults (retries with backoff, failed jobs kept as dead letters): a completed
 * job is removed at once. What it did is in Postgres (webhook_delivery), which is also what makes
 * a re-run harmless, so Redis need not keep it.
 */
export const DELIVERY_JOB_OPTIONS = { removeOnComplete: true } as const;
