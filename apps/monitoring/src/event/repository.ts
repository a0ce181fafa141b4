import type { ReadRunner } from '@platform/db';

/**
 * An `event` row as the table holds it (domain, alert, webhook and created_at included), what the API
 * reads back; the ingest worker's `PreparedEvent` (ingest/prepare.ts) is a parsed event before it is stored.
 */
export interface StoredEventRow {
  domain_id: string;
  event_id: string;
  event_key: string;
  event_type: string;
  title: string;
  description: string;
  severity: string;
  rule: string;
  image_url: string;
  resource: unknown;
  resource_id: string;
  provider: string;
  account: string;
  additional_info: unknown;
  raw_data: unknown;
  workspace_id: string;
  project_id: string;
  alert_id: string;
  webhook_id: string;
  created_at: Date;
  occurred_at: Date | null;
}

/** The API's reads of the `event` table (the worker writes it: ingest/store.ts; list and stat read through fields.ts). */
export class EventRepository {
  /** The event by id in the domain, on the runner given (the read router's choice for the caller). */
  async find(db: ReadRunner, domainId: string, eventId: string): Promise<StoredEventRow | undefined> {
    const { rows } = await db.query<StoredEventRow>('SELECT * FROM event WHERE domain_id = $1 AND event_id = $2', [domainId, eventId]);
    return rows[0];
  }
}
