import type { Pool } from 'pg';
import { generateId } from '@platform/core';
import { withTransaction } from '@platform/db';
import type { DeliveryJob } from './job';
import type { PreparedEvent, Outcome, PreparedDelivery } from './prepare';

interface OpenAlert {
  alert_id: string;
  state: string;
  isNew: boolean;
  touched: boolean;
  resolved: boolean;
  domain_id: string;
  workspace_id: string;
  project_id: string;
  webhook_id: string;
  event_key: string;
  title: string;
  severity: string;
}

const alertKey = (domain: string, project: string, eventKey: string) => JSON.stringify([domain, project, eventKey]);

/**
 * Stores parsed deliveries in ONE transaction: each delivery row first (its primary key is the job
 * id, so a delivery already stored — a job re-run after a crash or a stall — is skipped), then the
 * events, linked to alerts as upstream links them, then the webhooks' request counters. Either all
 * of it is committed or none, so a delivery is stored exactly once however often its job runs.
 * Returns the number of deliveries that were new.
 */
export async function storeDeliveries(pool: Pool, deliveries: PreparedDelivery[], sameEventSeconds: number): Promise<number> {
  if (!deliveries.length) return 0;
  return withTransaction(pool, async (c) => {
    const inserted = await c.query<{ delivery_id: string }>(
      `INSERT INTO webhook_delivery (delivery_id, domain_id, webhook_id, outcome, event_count, error, received_at)
       SELECT d.delivery_id, d.domain_id, d.webhook_id, d.outcome, d.event_count, d.error, d.received_at
       FROM jsonb_to_recordset($1::jsonb) AS d(delivery_id text, domain_id text, webhook_id text, outcome text, event_count int, error text, received_at timestamptz)
       ON CONFLICT (delivery_id) DO NOTHING
       RETURNING delivery_id`,
      [
        JSON.stringify(
          deliveries.map((d) => ({
            delivery_id: d.job.delivery_id,
            domain_id: d.job.webhook.domain_id,
            webhook_id: d.job.webhook.webhook_id,
            outcome: d.outcome,
            event_count: d.events.length,
            error: d.error,
            received_at: d.job.received_at,
          })),
        ),
      ],
    );
    const fresh = new Set(inserted.rows.map((r) => r.delivery_id));
    const todo = deliveries.filter((d) => fresh.has(d.job.delivery_id));
    if (!todo.length) return 0;

    // Serialize deliveries of the same (domain, project, event_key) across transactions (of this
    // worker and of others): each takes its keys' locks in one order, that of the lock numbers, so
    // two transactions never wait on each other in a cycle (keys whose hashes collide included).
    const keys = [...new Set(todo.flatMap((d) => d.events.map((e) => alertKey(d.job.webhook.domain_id, d.job.webhook.project_id, e.event_key))))];
    if (keys.length) {
      await c.query(`SELECT pg_advisory_xact_lock(h) FROM (SELECT DISTINCT hashtextextended(k, 7) AS h FROM unnest($1::text[]) AS k ORDER BY 1) AS s`, [keys]);
    }

    // The alert of the latest non-recovery event of each key within the window (upstream's get_event_by_key).
    const open = new Map<string, OpenAlert>();
    if (keys.length) {
      const found = await c.query(
        `SELECT DISTINCT ON (a.domain_id, a.project_id, a.event_key) a.*
         FROM alert a
         JOIN (SELECT k->>0 AS domain_id, k->>1 AS project_id, k->>2 AS event_key FROM unnest($1::jsonb[]) AS k) AS w
           ON a.domain_id = w.domain_id AND a.project_id = w.project_id AND a.event_key = w.event_key
         WHERE a.last_event_at >= now() - make_interval(secs => $2)
         ORDER BY a.domain_id, a.project_id, a.event_key, a.last_event_at DESC`,
        [keys, sameEventSeconds],
      );
      for (const a of found.rows) open.set(alertKey(a.domain_id, a.project_id, a.event_key), { ...a, isNew: false, touched: false, resolved: false });
    }

    const events: (PreparedEvent & { alert_id: string; raw_data: unknown; domain_id: string; workspace_id: string; project_id: string; webhook_id: string; delivery_id: string })[] = [];
    const outcomes: { delivery_id: string; outcome: Outcome; event_count: number }[] = [];
    const counters = new Map<string, { domain_id: string; webhook_id: string; total: number; error: number }>();
    for (const d of todo) {
      const w = d.job.webhook;
      const counter = counters.get(w.webhook_id) ?? { domain_id: w.domain_id, webhook_id: w.webhook_id, total: 0, error: 0 };
      counter.total += 1;
      if (d.outcome === 'PARSE_ERROR') counter.error += 1;
      counters.set(w.webhook_id, counter);

      let stored = 0;
      for (const e of d.events) {
        const key = alertKey(w.domain_id, w.project_id, e.event_key);
        let alert = open.get(key);
        if (alert && alert.state !== 'RESOLVED') {
          if (e.event_type === 'RECOVERY') {
            alert.state = 'RESOLVED';
            alert.resolved = true;
          } else {
            alert.touched = true;
          }
        } else if (e.event_type === 'RECOVERY') {
          continue; // upstream keeps no recovery without an open alert; the delivery row records it
        } else {
          alert = {
            alert_id: generateId('alert'),
            state: e.event_type === 'ERROR' ? 'ERROR' : 'TRIGGERED',
            isNew: true,
            touched: true,
            resolved: false,
            domain_id: w.domain_id,
            workspace_id: w.workspace_id,
            project_id: w.project_id,
            webhook_id: w.webhook_id,
            event_key: e.event_key,
            title: e.title,
            severity: e.severity,
          };
          open.set(key, alert);
        }
        stored++;
        events.push({ ...e, alert_id: alert.alert_id, raw_data: d.raw_data, domain_id: w.domain_id, workspace_id: w.workspace_id, project_id: w.project_id, webhook_id: w.webhook_id, delivery_id: d.job.delivery_id });
      }
      if (stored !== d.events.length) outcomes.push({ delivery_id: d.job.delivery_id, outcome: stored ? d.outcome : 'RECOVERY_WITHOUT_ALERT', event_count: stored });
    }

    // Alerts, events and outcomes in one statement (its parts touch different rows), then the
    // counters: three round trips less per transaction than one statement each.
    const alerts = [...open.values()];
    const created = alerts.filter((a) => a.isNew);
    const changed = alerts.filter((a) => !a.isNew && (a.touched || a.resolved)).map(({ domain_id, alert_id, state, touched, resolved }) => ({ domain_id, alert_id, state, touched, resolved }));
    await c.query(
      `WITH new_alerts AS (
         INSERT INTO alert (domain_id, alert_id, workspace_id, project_id, webhook_id, event_key, state, title, severity, last_event_at, resolved_at)
         SELECT a.domain_id, a.alert_id, a.workspace_id, a.project_id, a.webhook_id, a.event_key, a.state, a.title, a.severity, now(), CASE WHEN a.state = 'RESOLVED' THEN now() END
         FROM jsonb_to_recordset($1::jsonb) AS a(domain_id text, alert_id text, workspace_id text, project_id text, webhook_id text, event_key text, state text, title text, severity text)
       ), changed_alerts AS (
         UPDATE alert a SET
           state = x.state,
           last_event_at = CASE WHEN x.touched THEN now() ELSE a.last_event_at END,
           resolved_at = CASE WHEN x.resolved THEN now() ELSE a.resolved_at END
         FROM jsonb_to_recordset($2::jsonb) AS x(domain_id text, alert_id text, state text, touched boolean, resolved boolean)
         WHERE a.domain_id = x.domain_id AND a.alert_id = x.alert_id
       ), outcomes AS (
         UPDATE webhook_delivery d SET outcome = x.outcome, event_count = x.event_count
         FROM jsonb_to_recordset($3::jsonb) AS x(delivery_id text, outcome text, event_count int) WHERE d.delivery_id = x.delivery_id
       )
       INSERT INTO event (domain_id, event_id, event_key, event_type, title, description, severity, rule, image_url, resource, resource_id,
                          provider, account, additional_info, raw_data, workspace_id, project_id, alert_id, webhook_id, delivery_id, delivery_seq, occurred_at)
       SELECT e.domain_id, e.event_id, e.event_key, e.event_type, e.title, e.description, e.severity, e.rule, e.image_url, e.resource, e.resource_id,
              e.provider, e.account, e.additional_info, e.raw_data, e.workspace_id, e.project_id, e.alert_id, e.webhook_id, e.delivery_id, e.delivery_seq, e.occurred_at
       FROM jsonb_to_recordset($4::jsonb) AS e(domain_id text, event_id text, event_key text, event_type text, title text, description text, severity text,
            rule text, image_url text, resource jsonb, resource_id text, provider text, account text, additional_info jsonb, raw_data jsonb,
            workspace_id text, project_id text, alert_id text, webhook_id text, delivery_id text, delivery_seq int, occurred_at timestamptz)`,
      [JSON.stringify(created), JSON.stringify(changed), JSON.stringify(outcomes), JSON.stringify(events)],
    );
    // The webhooks' rows are locked in one order (the CTE sorts before it locks, and the update only
    // reaches rows it has returned), so concurrent batches never deadlock on their counters.
    const counted = [...counters.values()];
    await c.query(
      `WITH locked AS MATERIALIZED (
         SELECT domain_id, webhook_id FROM webhook
         WHERE (domain_id, webhook_id) IN (SELECT x->>'domain_id', x->>'webhook_id' FROM jsonb_array_elements($1::jsonb) AS x)
         ORDER BY domain_id, webhook_id FOR UPDATE
       )
       UPDATE webhook w SET requests_total = w.requests_total + x.total, requests_error = w.requests_error + x.error
       FROM locked l, jsonb_to_recordset($1::jsonb) AS x(domain_id text, webhook_id text, total bigint, error bigint)
       WHERE w.domain_id = l.domain_id AND w.webhook_id = l.webhook_id AND x.domain_id = l.domain_id AND x.webhook_id = l.webhook_id`,
      [JSON.stringify(counted)],
    );
    return todo.length;
  });
}

/**
 * Settles deliveries whose enqueue failed without knowing whether Redis took them (the reply was
 * lost when Redis died, or it came after the timeout): whoever writes a delivery's row first decides
 * its fate. A row written here (outcome NOT_ACCEPTED) makes the worker skip the delivery if its job
 * turns up after all, so the 503 the sender gets is true; a row already there means the worker has
 * stored the delivery, so the sender must get its 2xx. Returns the ids refused (now NOT_ACCEPTED).
 */
export async function markNotAccepted(pool: Pool, deliveries: DeliveryJob[]): Promise<Set<string>> {
  const { rows } = await pool.query<{ delivery_id: string }>(
    `INSERT INTO webhook_delivery (delivery_id, domain_id, webhook_id, outcome, event_count, error, received_at)
     SELECT d.delivery_id, d.domain_id, d.webhook_id, 'NOT_ACCEPTED', 0, 'the queue did not confirm the delivery: the sender was answered 503', d.received_at
     FROM jsonb_to_recordset($1::jsonb) AS d(delivery_id text, domain_id text, webhook_id text, received_at timestamptz)
     ON CONFLICT (delivery_id) DO NOTHING
     RETURNING delivery_id`,
    [JSON.stringify(deliveries.map((d) => ({ delivery_id: d.delivery_id, domain_id: d.webhook.domain_id, webhook_id: d.webhook.webhook_id, received_at: d.received_at })))],
  );
  return new Set(rows.map((r) => r.delivery_id));
}
