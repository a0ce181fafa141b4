import type { Pool } from 'pg';
import { defineResource } from '../resource';

export const TABLE_DDL = `
CREATE TABLE cloud_service (
  cloud_service_id text PRIMARY KEY,
  name text,
  state text NOT NULL,
  provider text,
  instance_size numeric,
  cpu integer,
  is_managed boolean,
  created_at timestamptz NOT NULL,
  launched_at timestamptz,
  ip_addresses text[],
  tags jsonb,
  data jsonb,
  disks jsonb,
  domain_id text NOT NULL,
  workspace_id text,
  billed_month text,
  cost double precision
)`;

export interface Row {
  cloud_service_id: string;
  name: string | null;
  state: string;
  provider: string | null;
  instance_size: number | null;
  cpu: number | null;
  is_managed: boolean | null;
  created_at: string;
  launched_at: string | null;
  ip_addresses: string[] | null;
  tags: Record<string, unknown> | null;
  data: Record<string, unknown> | null;
  disks: Record<string, unknown>[] | null;
  domain_id: string;
  workspace_id: string | null;
  billed_month: string | null;
  cost: number | null;
}

export const ROWS: Row[] = [
  {
    cloud_service_id: 'cs-1', name: 'web-server-01', state: 'ACTIVE', provider: 'aws', instance_size: 2.5, cpu: 2, is_managed: true,
    created_at: '2024-01-05T10:00:00.000Z', launched_at: '2024-01-01T00:00:00.000Z', ip_addresses: ['10.0.0.1', '52.1.1.1'],
    tags: { env: 'prod', team: 'web', level: 3 }, data: { power_state: 'RUNNING', size: 100, nested: { a: 'x' }, list: [1, 5, 'z'] },
    disks: [{ size: 10, type: 'gp2' }, { size: 100, type: 'io1' }], domain_id: 'd1', workspace_id: 'w1', billed_month: '2024-01', cost: 120.5,
  },
  {
    cloud_service_id: 'cs-2', name: 'Web-Server-02', state: 'ACTIVE', provider: 'aws', instance_size: 4, cpu: 4, is_managed: false,
    created_at: '2024-01-20T12:30:00.000Z', launched_at: null, ip_addresses: ['10.0.0.2'],
    tags: { env: 'dev', team: 'web' }, data: { power_state: 'STOPPED', size: 50 },
    disks: [{ size: 20, type: 'gp2' }], domain_id: 'd1', workspace_id: 'w1', billed_month: '2024-01', cost: 98.1,
  },
  {
    cloud_service_id: 'cs-3', name: 'db-main', state: 'DISCONNECTED', provider: 'google_cloud', instance_size: 8, cpu: 8, is_managed: null,
    created_at: '2024-02-10T08:00:00.000Z', launched_at: '2024-02-01T00:00:00.000Z', ip_addresses: [],
    tags: { env: 'prod' }, data: { power_state: 'RUNNING', size: 'large' },
    disks: [], domain_id: 'd1', workspace_id: 'w2', billed_month: '2024-02', cost: 300,
  },
  {
    cloud_service_id: 'cs-4', name: null, state: 'DELETED', provider: 'azure', instance_size: null, cpu: null, is_managed: true,
    created_at: '2024-02-15T00:00:00.000Z', launched_at: null, ip_addresses: null,
    tags: null, data: { power_state: null }, disks: null, domain_id: 'd1', workspace_id: null, billed_month: '2024-02', cost: null,
  },
  {
    cloud_service_id: 'cs-5', name: 'cache_50%', state: 'ACTIVE', provider: 'aws', instance_size: 1.5, cpu: 1, is_managed: false,
    created_at: '2024-03-01T00:00:00.000Z', launched_at: '2024-03-01T00:00:00.000Z', ip_addresses: ['10.0.0.5'],
    tags: { env: ['prod', 'dr'], team: 'data' }, data: { power_state: 'RUNNING', size: 10 },
    disks: [{ size: 5, type: 'gp3' }], domain_id: 'd1', workspace_id: 'w2', billed_month: '2024-03', cost: 10,
  },
  {
    cloud_service_id: 'cs-6', name: 'other-domain', state: 'ACTIVE', provider: 'aws', instance_size: 2, cpu: 2, is_managed: false,
    created_at: '2024-01-07T00:00:00.000Z', launched_at: null, ip_addresses: ['10.0.0.6'],
    tags: { env: 'prod' }, data: { power_state: 'RUNNING' }, disks: [], domain_id: 'd2', workspace_id: 'w9', billed_month: '2024-01', cost: 1000,
  },
];

export const resource = defineResource({
  table: 'cloud_service',
  idKey: 'cloud_service_id',
  keywordKeys: ['cloud_service_id', 'name', 'ip_addresses', 'data.power_state'],
  dateKey: 'created_at',
  minimalKeys: ['cloud_service_id', 'name'],
  fields: {
    cloud_service_id: { column: 'cloud_service_id', type: 'string' },
    name: { column: 'name', type: 'string' },
    state: { column: 'state', type: 'string', notNull: true },
    provider: { column: 'provider', type: 'string' },
    instance_size: { column: 'instance_size', type: 'number' },
    cpu: { column: 'cpu', type: 'integer' },
    is_managed: { column: 'is_managed', type: 'boolean' },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    launched_at: { column: 'launched_at', type: 'datetime' },
    ip_addresses: { column: 'ip_addresses', type: 'string_array' },
    tags: { column: 'tags', type: 'json' },
    data: { column: 'data', type: 'json' },
    disks: { column: 'disks', type: 'json_array' },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string' },
    billed_month: { column: 'billed_month', type: 'string', dateFormat: 'YYYY-MM' },
    cost: { column: 'cost', type: 'number' },
  },
});

export const COLUMNS = Object.keys(ROWS[0]) as (keyof Row)[];
const JSON_COLS = new Set(['tags', 'data', 'disks']);

export async function insertRows(pool: Pool, rows: Row[], table = 'cloud_service'): Promise<void> {
  for (const r of rows) {
    const vals = COLUMNS.map((c) => (JSON_COLS.has(c) && r[c] !== null ? JSON.stringify(r[c]) : r[c]));
    await pool.query(
      `INSERT INTO ${table} (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
      vals,
    );
  }
}

export const D1 = [{ key: 'domain_id', value: 'd1', operator: 'eq' }];
