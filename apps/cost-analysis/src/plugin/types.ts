/**
 * The cost data-source plugin contract, as upstream's (cloudforet-io/api plugin/cost_analysis):
 * `init` answers the plugin's metadata for the given options, `verify` checks options and secret,
 * `getTasks` divides one collection job into tasks, `getData` streams a task's cost data page by page.
 */
export interface PluginInput {
  options: Record<string, unknown>;
  secret_data: Record<string, unknown>;
  schema?: string;
  /** The data source's domain (upstream sends it with every call). */
  domain_id?: string;
}

export interface ChangedInfo {
  start: string;
  end?: string;
  filter?: Record<string, unknown>;
}

export interface PluginTask {
  task_options: Record<string, unknown>;
  task_changed?: ChangedInfo;
}

export interface TasksResult {
  tasks: PluginTask[];
  changed: ChangedInfo[];
  /** Accounts the plugin will sync (upstream's TasksInfo.synced_accounts; account routing). */
  synced_accounts?: { account_id: string }[];
}

/** One cost record (upstream's CostInfo), amounts in `currency`. */
export interface CostRecord {
  cost: number;
  currency: string;
  usage_quantity: number;
  usage_type: string;
  usage_unit: string;
  provider: string;
  region_code: string;
  product: string;
  account: string;
  project_id: string;
  service_account_id: string;
  /** YYYY-MM-DD */
  billed_date: string;
  /** Line of the source file, for error reports. */
  line?: number;
  tags: Record<string, unknown>;
  additional_info: Record<string, unknown>;
}

/** A row of the source that is not cost data, with its line number in the source file. */
export interface RowError {
  line: number;
  message: string;
}

export interface DataPage {
  results: CostRecord[];
  errors: RowError[];
}

/** A plugin failure that retrying cannot fix (bad options, refused URL, missing column): the task fails at once. */
export class PluginError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PluginError';
  }
}

export interface CostDataSourcePlugin {
  plugin_id: string;
  name: string;
  /** Known versions, newest last. */
  versions: string[];
  /** Option keys a data source must set. */
  required_keys: string[];
  /** The plugin's metadata for these options (a remote plugin's DataSource.init). */
  init(options: Record<string, unknown>, ctx?: { domain_id?: string }): { metadata: Record<string, unknown> } | Promise<{ metadata: Record<string, unknown> }>;
  /** Throws a PluginError when options or secret are not usable. */
  verify(input: PluginInput): Promise<void>;
  getTasks(input: PluginInput & { start?: string; last_synchronized_at?: string }): Promise<TasksResult>;
  /** `metadata`: the data source's stored plugin metadata (a remote plugin's rows take its `currency`). */
  getData(input: PluginInput & { task_options: Record<string, unknown>; signal: AbortSignal; metadata?: Record<string, unknown> }): AsyncIterable<DataPage>;
}
