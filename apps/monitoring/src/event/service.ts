import type { AuthContext } from '@platform/auth';
import { isoOrEmpty } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery } from '@platform/query';
import type { MonitoringDeps } from '../deps';
import type { Struct } from '../plugins/registry';
import { equalsFilters, type ProjectAccess } from '../scope';
import { eventResource, type EventRow } from './repository';

export function toEventInfo(r: EventRow) {
  const resource = (r.resource ?? {}) as { resource_id?: string; resource_type?: string; name?: string };
  return {
    event_id: r.event_id,
    event_key: r.event_key,
    event_type: r.event_type,
    title: r.title,
    description: r.description,
    severity: r.severity,
    rule: r.rule,
    image_url: r.image_url,
    resource,
    resources: resource.resource_id ? [resource.resource_id] : [],
    provider: r.provider,
    account: r.account,
    additional_info: (r.additional_info ?? {}) as Struct,
    raw_data: (r.raw_data ?? {}) as Struct,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    project_id: r.project_id,
    alert_id: r.alert_id,
    webhook_id: r.webhook_id,
    created_at: isoOrEmpty(r.created_at),
    occurred_at: isoOrEmpty(r.occurred_at),
  };
}

// The list's named filters; `resource` matches the event's resource id.
const FILTERS = {
  event_id: 'event_id',
  event_key: 'event_key',
  event_type: 'event_type',
  severity: 'severity',
  resource: 'resource_id',
  provider: 'provider',
  account: 'account',
  workspace_id: 'workspace_id',
  project_id: 'project_id',
  alert_id: 'alert_id',
  webhook_id: 'webhook_id',
};

/** Events are read-only through the API: the worker writes them from webhook deliveries. */
export class EventService {
  constructor(
    private readonly deps: MonitoringDeps,
    private readonly access: ProjectAccess,
  ) {}

  async get(auth: AuthContext, id: string) {
    const { rows } = await this.deps.reads.for(auth).query<EventRow>('SELECT * FROM event WHERE domain_id = $1 AND event_id = $2', [auth.domainId, id]);
    const row = rows[0];
    if (!row || !(await this.access.visible(auth, row))) throw errors.notFound('event_id', id);
    return toEventInfo(row);
  }

  async list(auth: AuthContext, input: { query?: Query } & Record<string, unknown>) {
    const scope = [...(await this.access.conditions(auth, input.project_id)), ...equalsFilters(input, FILTERS)];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), eventResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toEventInfo(r as EventRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), eventResource, query, await this.access.conditions(auth));
  }
}
