import type { CostAnalysis, CostPluginClient, StreamOptions } from '@platform/plugin';
import type { ChangedInfo, CostDataSourcePlugin, CostRecord, DataPage, TasksResult } from './types';

/**
 * A cost data source plugin that runs in its own container and speaks upstream's gRPC protocol
 * (spaceone.api.cost_analysis.plugin), seen through the same interface as a built-in. The mapping is
 * upstream's cost-analysis service's (connector/datasource_plugin_connector.py, service/job_service.py):
 *
 * - init answers `metadata` as the plugin gives it; it is stored in plugin_info.metadata.
 * - get_tasks: tasks, changed and synced_accounts as sent (a ChangedInfo's '' end and {} filter are "none").
 * - get_data: one page per CostsInfo message. A CostInfo has no currency: upstream takes the data
 *   source's `metadata.currency` (USD when the plugin names none); it has no account, project or
 *   service account either (upstream sets those from the secret's service account, which this platform
 *   does not have), so they are empty and the data source's workspace owns the rows.
 * - Every failure is already our envelope (libs/plugin): the plugin's own ERROR_ code with a 4xx, 502 for
 *   garbage, 503 (retryable) for a plugin that is down or slow; secrets redacted from the text.
 */
export interface RemotePluginOptions {
  plugin_id: string;
  /** The version the endpoint serves (the resolver's updated_version). */
  version: string;
  /** Bounds of a get_data stream (defaults: the client's PLUGIN_STREAM_* configuration). */
  stream?: Omit<StreamOptions, 'signal'>;
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

function changedInfo(c: CostAnalysis.ChangedInfo): ChangedInfo {
  return { start: c.start, ...(c.end && { end: c.end }), ...(Object.keys(c.filter).length && { filter: c.filter }) };
}

function record(c: CostAnalysis.CostInfo, currency: string): CostRecord {
  return {
    cost: c.cost,
    currency,
    usage_quantity: c.usage_quantity,
    usage_type: c.usage_type,
    usage_unit: c.usage_unit,
    provider: c.provider,
    region_code: c.region_code,
    product: c.product,
    account: '',
    project_id: '',
    service_account_id: '',
    billed_date: c.billed_date,
    tags: c.tags,
    additional_info: c.additional_info,
  };
}

export function remoteCostPlugin(client: CostPluginClient, o: RemotePluginOptions): CostDataSourcePlugin {
  return {
    plugin_id: o.plugin_id,
    name: o.plugin_id,
    versions: [o.version],
    // A remote plugin checks its own options (its init/verify refuse with ERROR_REQUIRED_PARAMETER).
    required_keys: [],

    async init(options, ctx) {
      const info = await client.dataSource.init({ options, domain_id: ctx?.domain_id });
      return { metadata: info.metadata };
    },

    async verify({ options, secret_data, schema, domain_id }) {
      await client.dataSource.verify({ options, secret_data, schema, domain_id });
    },

    async getTasks({ options, secret_data, schema, domain_id, start, last_synchronized_at }): Promise<TasksResult> {
      const r = await client.job.getTasks({ options, secret_data, schema, domain_id, start, last_synchronized_at });
      return {
        tasks: r.tasks.map((t) => ({ task_options: t.task_options, ...(t.task_changed && { task_changed: changedInfo(t.task_changed) }) })),
        changed: r.changed.map(changedInfo),
        synced_accounts: r.synced_accounts.filter((a) => a.account_id).map((a) => ({ account_id: a.account_id })),
      };
    },

    async *getData({ options, secret_data, schema, domain_id, task_options, signal, metadata }): AsyncGenerator<DataPage> {
      const currency = text(metadata?.currency) || 'USD';
      let line = 0;
      for await (const message of client.cost.getData({ options, secret_data, schema, task_options, domain_id }, { ...o.stream, signal })) {
        const results = new Array<CostRecord>(message.results.length);
        for (let i = 0; i < results.length; i++) {
          results[i] = record(message.results[i], currency);
          results[i].line = ++line;
        }
        yield { results, errors: [] };
      }
    },
  };
}
