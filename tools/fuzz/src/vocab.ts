import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * What makes generated requests reach real code: the field names of each resource (so filters, sorts,
 * groups and `only` name real columns and JSON paths), and the ids of records made in the setup phase
 * (so get/update/delete find real rows).
 */

export const ROOT = path.resolve(__dirname, '../../..');
export const DOMAIN = 'domain-local';
export const WORKSPACE = 'workspace-local';
export const PROJECT = 'project-fuzz';
export const OTHER_DOMAIN = 'domain-fuzz-other';

export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'datetime' | 'json' | 'string_array' | 'json_array';
export interface Field {
  key: string;
  type: FieldType;
}

/** The identity endpoint list is filtered in memory over these keys (apps/identity/src/endpoint/service.ts). */
const ENDPOINT_FIELDS = ['service', 'name', 'endpoint', 'internal_endpoint', 'state', 'version'];

/**
 * The field map of the resource an operation path names, read from the text of
 * `apps/<app>/src/<resource>/repository.ts` (a tool may not import an app): every `key: { column, type }`
 * and `key: str(...)` entry.
 */
export function fieldsOf(opPath: string): Field[] {
  const [, app, , resource] = opPath.split('/');
  if (app === 'identity' && resource === 'endpoint') return ENDPOINT_FIELDS.map((key) => ({ key, type: 'string' }));
  const file = path.join(ROOT, 'apps', app, 'src', resource ?? '', 'repository.ts');
  if (!resource || !existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const out: Field[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*'?([A-Za-z_][\w.]*)'?:\s*(.*)$/.exec(line);
    if (!m) continue;
    const typed = /column:\s*'[^']*',\s*type:\s*'(\w+)'/.exec(m[2]);
    const type = typed ? (typed[1] as FieldType) : /^(\{\s*\.\.\.)?str\(/.test(m[2]) ? 'string' : undefined;
    if (type && !out.some((f) => f.key === m[1])) out.push({ key: m[1], type });
  }
  return out;
}

/** Sub-keys tried under JSON fields: the setup phase stores some of them. */
export const JSON_SUBKEYS = ['env', 'team', 'power_state', 'cpu', 'a.b', 'plugin_id', 'USD', 'x', '0', 'name'];

/**
 * Ids made by the setup phase, by app and the property name that carries them (`*` for every app).
 * `victims` are only offered to delete-like verbs, so get/update keep finding rows.
 */
export class Pools {
  private readonly keep = new Map<string, string[]>();
  private readonly victims = new Map<string, string[]>();
  /** Webhook URLs (path part) and export download tokens, for the routes that are not operations. */
  readonly webhookPaths: string[] = [];
  readonly downloadTokens: string[] = [];
  refreshToken = '';

  add(app: string, prop: string, id: unknown, victim = false) {
    if (typeof id !== 'string' || !id) return;
    const m = victim ? this.victims : this.keep;
    const list = m.get(`${app}:${prop}`) ?? [];
    if (!list.includes(id)) list.push(id);
    m.set(`${app}:${prop}`, list);
  }

  ids(app: string, prop: string, victim: boolean): string[] {
    const p = prop === 'parent_group_id' ? 'project_group_id' : prop;
    const from = (m: Map<string, string[]>) => [...(m.get(`${app}:${p}`) ?? []), ...(m.get(`*:${p}`) ?? [])];
    // Delete-like verbs get only the victims (while there are any), so the kept rows stay for the others.
    const victims = victim ? from(this.victims) : [];
    return victims.length ? victims : from(this.keep);
  }

  /** Whether `id` is a record setup made in the fuzz domain, pooled for `app` under `prop` (not the shared `*` ones). */
  owns(app: string, prop: string, id: unknown): boolean {
    const k = `${app}:${prop}`;
    return typeof id === 'string' && Boolean(this.keep.get(k)?.includes(id) || this.victims.get(k)?.includes(id));
  }

  /** For the report: how many ids of each kind. */
  summary(): string {
    return [...this.keep.entries()].map(([k, v]) => `${k}=${v.length}${this.victims.get(k)?.length ? `+${this.victims.get(k)!.length}` : ''}`).join(' ');
  }
}

export const PLUGINS: Record<string, string[]> = {
  'cost-analysis': ['plugin-http-file-cost-datasource'],
  statistics: ['plugin-postgresql-stat-storage'],
  monitoring: [
    'plugin-prometheus-mon-webhook',
    'plugin-grafana-mon-webhook',
    'plugin-aws-sns-mon-webhook',
    'plugin-api-direct-mon-webhook',
    'plugin-prometheus-mon-datasource',
  ],
};

export const STAT_OPERATORS = ['count', 'sum', 'average', 'max', 'min', 'first', 'last', 'push', 'add_to_set', 'merge_objects'];
export const PROJECT_OPERATORS = ['size', 'sum', 'array_to_object', 'object_to_array', 'add', 'subtract', 'multiply', 'divide'];
export const DATE_FORMATS = ['year', 'month', 'day', '%Y-%m-%d', '%H:%M:%S', '%B %A', '%Q'];
