import type { AuthContext } from '@platform/auth';
import { projectScope } from '@platform/directory';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, parseIso8601, resolveOnly, runList, runStat, type Condition, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { OpsflowDeps } from '../deps';
import { eventResource } from './fields';
import { EventRepository, type EventRow } from './repository';
import { toEventInfo, type EventType } from './responses';

/** One action on a task, as the task side reports it. */
export interface RecordInput {
  event_key: string;
  domain_id: string;
  workspace_id?: string;
  project_id: string;
  task_id: string;
  event_type: EventType;
  name: string;
  description?: string;
  user_type: string;
  user_id: string;
  additional_info?: Record<string, unknown>;
  created_at?: string;
}

export interface ListInput {
  query?: Query;
  task_id?: string;
  event_type?: EventType;
  user_type?: string;
  created_type?: string;
  event_id?: string;
  user_id?: string;
  created_by?: string;
  workspace_id?: string;
  project_id?: string;
}

/** What a caller may see: their domain, and only their workspace with a workspace-scoped token. */
function visibility(auth: AuthContext): Condition[] {
  const c: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
  if (auth.scope === 'WORKSPACE') c.push({ key: 'workspace_id', value: auth.workspaceId, operator: 'eq' });
  return c;
}

export class EventService {
  private readonly events: EventRepository;

  constructor(private readonly deps: OpsflowDeps) {
    this.events = new EventRepository(deps.prisma, deps.pool);
  }

  /** visibility, and for a WORKSPACE_MEMBER only the events of their projects (libs/directory). */
  private async scope(auth: AuthContext, projectId?: string): Promise<Condition[]> {
    const projects = await projectScope(this.deps.directory, auth);
    projects.check(projectId); // upstream's authorization handler: someone else's project is 403
    return [...visibility(auth), ...projects.conditions()];
  }

  /**
   * Records an event, idempotent on (domain_id, event_key): a retried delivery answers the event
   * already recorded and writes nothing. The project must be in identity's directory; the event takes
   * its workspace from it.
   */
  async record(input: RecordInput): Promise<{ event: ReturnType<typeof toEventInfo>; created: boolean }> {
    // Redis unreachable is not the producer's fault: 503, so it retries later (the event key makes that safe).
    const project = await this.deps.directory.getProject(input.domain_id, input.project_id).catch((err: Error) => {
      this.deps.logger.warn({ err: err.message }, 'project directory unavailable');
      throw errors.unavailable('The project directory is unavailable; retry later.');
    });
    if (!project) throw errors.notFound('project_id', input.project_id);
    if (input.workspace_id !== undefined && input.workspace_id !== project.workspace_id) {
      throw errors.invalidParameter('workspace_id', `project ${input.project_id} is in workspace ${project.workspace_id}`);
    }
    const inserted = await this.events.insertIfNew({
      domain_id: input.domain_id,
      event_id: generateId('event'),
      event_key: input.event_key,
      event_type: input.event_type,
      name: input.name,
      description: input.description ?? '',
      user_type: input.user_type,
      user_id: input.user_id,
      workspace_id: project.workspace_id,
      project_id: input.project_id,
      task_id: input.task_id,
      created_at: input.created_at ? parseIso8601(input.created_at) : null,
      additional_info: input.additional_info ?? {},
    });
    if (inserted) return { event: toEventInfo(inserted), created: true };
    const existing = await this.events.findByKey(input.domain_id, input.event_key);
    if (!existing) throw errors.notFound('event_key', input.event_key); // deleted between the two statements: nothing to answer
    const same = existing.task_id === input.task_id && existing.event_type === input.event_type && existing.user_id === input.user_id;
    if (!same) throw errors.conflict('ERROR_ALREADY_EXISTS', `event_key ${input.event_key} already records another action (${existing.event_id}).`);
    return { event: toEventInfo(existing), created: false };
  }

  async list(auth: AuthContext, input: ListInput) {
    const scope = await this.scope(auth, input.project_id);
    // created_type / created_by are upstream's current names of user_type / user_id: either name filters.
    for (const [now, old] of [['created_type', 'user_type'], ['created_by', 'user_id']] as const) {
      if (input[now] !== undefined && input[old] !== undefined && input[now] !== input[old]) {
        throw errors.invalidParameter(now, `${now} and ${old} name the same field and differ`);
      }
    }
    const filters = { ...input, user_type: input.created_type ?? input.user_type, user_id: input.created_by ?? input.user_id };
    scope.push(...eqConditions(filters, ['task_id', 'event_type', 'user_type', 'event_id', 'user_id', 'workspace_id', 'project_id']));
    // A task's history reads in the order it happened unless the query sorts otherwise.
    const query: Query = { ...input.query, sort: input.query?.sort?.length ? input.query.sort : [{ key: 'created_at' }] };
    const { rows, total_count } = await runList(this.deps.reads.for(auth), eventResource, query, scope);
    const only = resolveOnly(eventResource, input.query);
    return { results: rows.map((r) => applyOnly(toEventInfo(r as EventRow), only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), eventResource, query, await this.scope(auth));
  }
}
