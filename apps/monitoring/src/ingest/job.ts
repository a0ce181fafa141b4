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

/** One BullMQ job = one accepted delivery. Its job id is the delivery_id, the worker's idempotency key. */
export interface DeliveryJob {
  delivery_id: string;
  received_at: string;
  webhook: WebhookSnapshot;
  data: Struct;
}

export const DELIVERY_JOB_NAME = 'delivery';

/**
 * On top of the queue's defaults (retries with backoff, failed jobs kept as dead letters): a completed
 * job is removed at once. What it did is in Postgres (webhook_delivery), which is also what makes
 * a re-run harmless, so Redis need not keep it.
 */
export const DELIVERY_JOB_OPTIONS = { removeOnComplete: true } as const;
