import type { Pool } from 'pg';
import type { PrismaClient } from '../generated/prisma/client';

/** An `event` row as stored. */
export interface EventRow {
  domain_id: string;
  event_id: string;
  event_key: string;
  event_type: string;
  name: string;
  description: string;
  user_type: string;
  user_id: string;
  additional_info: unknown;
  workspace_id: string;
  project_id: string;
  task_id: string;
  created_at: Date;
  updated_at: Date;
}

/** What a new event is stored with (created_at: the producer's time, else now). */
export type NewEvent = Omit<EventRow, 'created_at' | 'updated_at'> & { created_at: Date | null };

/** Every read and write of the `event` table (the query DSL's list and stat read through fields.ts). */
export class EventRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

  /** Inserts the event unless the domain has one with its event_key; undefined when it had. */
  async insertIfNew(e: NewEvent): Promise<EventRow | undefined> {
    const { rows } = await this.pool.query<EventRow>(
      `INSERT INTO event (domain_id, event_id, event_key, event_type, name, description, user_type, user_id, workspace_id, project_id, task_id, created_at, updated_at, additional_info)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, COALESCE($12::timestamptz, now()), COALESCE($12::timestamptz, now()), $13::jsonb)
       ON CONFLICT (domain_id, event_key) DO NOTHING RETURNING *`,
      [e.domain_id, e.event_id, e.event_key, e.event_type, e.name, e.description, e.user_type, e.user_id, e.workspace_id, e.project_id, e.task_id, e.created_at, JSON.stringify(e.additional_info)],
    );
    return rows[0];
  }

  findByKey(domainId: string, eventKey: string): Promise<EventRow | null> {
    return this.prisma.event.findUnique({ where: { domain_id_event_key: { domain_id: domainId, event_key: eventKey } } });
  }
}
