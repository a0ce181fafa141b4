import type { RepositoryDeps } from '../deps';
import type { SchemaService } from './service';
import { isOutboundRefused } from '@platform/net';

/**
 * AUTOMATIC sync: every SCHEMA_SYNC_SWEEP_SECONDS the app claims the AUTOMATIC schemas whose last
 * attempt is older than SCHEMA_SYNC_INTERVAL_SECONDS (or that were never tried) and syncs them. A claim
 * stamps last_sync_tried_at in the same statement that picks the rows (SchemaRepository.claimDue), so
 * several replicas never sync the same schema twice in one interval, and a failing remote is retried
 * once per interval, not in a loop.
 */
export class SchemaSyncScheduler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly deps: RepositoryDeps,
    private readonly service: SchemaService,
    private readonly batch = 20,
  ) {}

  /** One pass: syncs every due AUTOMATIC schema; failures are recorded on the schema and counted. */
  async sweep(now = new Date()): Promise<{ synced: number; failed: number }> {
    const out = { synced: 0, failed: 0 };
    for (;;) {
      const due = await this.service.claimDue(now, this.batch);
      for (const s of due) {
        try {
          await this.service.syncRow(s);
          out.synced++;
        } catch (e) {
          out.failed++;
          this.deps.logger.warn({ domain_id: s.domain_id, schema_id: s.schema_id, err: (e as Error).message, ...(isOutboundRefused(e) && { outbound: e.detail }) }, 'automatic schema sync failed');
        }
      }
      if (due.length < this.batch) return out;
    }
  }

  start(): void {
    const every = this.deps.config.sync.sweepSeconds;
    if (every <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep()
        .then((r) => (r.synced || r.failed) && this.deps.logger.info(r, 'automatic schema sync'))
        .catch((err) => this.deps.logger.error({ err: (err as Error).message }, 'automatic schema sync sweep failed'))
        .finally(() => (this.running = undefined));
    }, every * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
