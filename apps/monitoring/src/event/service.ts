import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery } from '@platform/query';
import type { MonitoringDeps } from '../deps';
import { equalsFilters, type ProjectAccess } from '../scope';
import { eventResource } from './fields';
import { EventRepository, type StoredEventRow } from './repository';
import { toEventInfo } from './responses';

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
  private readonly repository = new EventRepository();

  constructor(
    private readonly deps: MonitoringDeps,
    private readonly access: ProjectAccess,
  ) {}

  async get(auth: AuthContext, id: string) {
    const row = await this.repository.find(this.deps.reads.for(auth), auth.domainId, id);
    if (!row || !(await this.access.visible(auth, row))) throw errors.notFound('event_id', id);
    return toEventInfo(row);
  }

  async list(auth: AuthContext, input: { query?: Query } & Record<string, unknown>) {
    const scope = [...(await this.access.conditions(auth, input.project_id)), ...equalsFilters(input, FILTERS)];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), eventResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toEventInfo(r as StoredEventRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), eventResource, query, await this.access.conditions(auth));
  }
}
