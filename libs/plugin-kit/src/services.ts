import { PACKAGES, type CostAnalysis, type Identity, type Monitoring } from '@platform/plugin';
import { servePlugin, type PluginServer, type ServeOptions, type ServiceHandlers, type StreamHandler, type UnaryHandler } from './server';

type Ok = Record<string, never> | void;

/** A cost data source plugin: DataSource, Job and Cost of spaceone.api.cost_analysis.plugin. */
export interface CostDataSourceHandlers {
  init: UnaryHandler<CostAnalysis.InitRequest, CostAnalysis.PluginInfoInput>;
  /** Throw to refuse the options or the secret; left out, every verify succeeds. */
  verify?: UnaryHandler<CostAnalysis.PluginVerifyRequest, Ok>;
  getTasks: UnaryHandler<CostAnalysis.GetTasksRequest, CostAnalysis.TasksInfoInput>;
  /** Left out, the call answers UNIMPLEMENTED (as older upstream plugins do). */
  getLinkedAccounts?: UnaryHandler<CostAnalysis.GetLinkedAccountsRequest, CostAnalysis.AccountsInfoInput>;
  /** A page of cost rows per message (a few hundred to a few thousand rows each is the usual size). */
  getData: StreamHandler<CostAnalysis.GetDataRequest, CostAnalysis.CostsInfoInput>;
}

/** A monitoring webhook plugin: Webhook and Event of spaceone.api.monitoring.plugin. */
export interface MonitoringWebhookHandlers {
  init: UnaryHandler<Monitoring.WebhookInitRequest, Monitoring.WebhookPluginInfoInput>;
  verify?: UnaryHandler<Monitoring.WebhookPluginVerifyRequest, Ok>;
  parse: UnaryHandler<Monitoring.ParseRequest, Monitoring.EventsInfoInput>;
}

/** A monitoring data source plugin: DataSource, and Metric and Log when it serves them. */
export interface MonitoringDataSourceHandlers {
  init: UnaryHandler<Monitoring.InitRequest, Monitoring.PluginInfoInput>;
  verify?: UnaryHandler<Monitoring.PluginVerifyRequest, Ok>;
  listMetrics?: UnaryHandler<Monitoring.MetricRequest, Monitoring.MetricsInfoInput>;
  getMetricData?: UnaryHandler<Monitoring.MetricDataRequest, Monitoring.MetricDataInfoInput>;
  listLogs?: StreamHandler<Monitoring.LogRequest, Monitoring.LogsDataInfoInput>;
}

/** An external authentication plugin: ExternalAuth of spaceone.api.identity.plugin. */
export interface ExternalAuthHandlers {
  init: UnaryHandler<Identity.InitRequest, Identity.PluginInfoInput>;
  authorize: UnaryHandler<Identity.AuthorizeRequest, Identity.UserInfoInput>;
}

const accept = () => ({});

export function costDataSourceServices(h: CostDataSourceHandlers): ServiceHandlers[] {
  const p = PACKAGES.costAnalysis;
  return [
    { service: `${p}.DataSource`, methods: { init: h.init, verify: h.verify ?? accept } },
    { service: `${p}.Job`, methods: { get_tasks: h.getTasks } },
    { service: `${p}.Cost`, methods: { get_linked_accounts: h.getLinkedAccounts, get_data: h.getData } },
  ];
}

export function monitoringWebhookServices(h: MonitoringWebhookHandlers): ServiceHandlers[] {
  const p = PACKAGES.monitoring;
  return [
    { service: `${p}.Webhook`, methods: { init: h.init, verify: h.verify ?? accept } },
    { service: `${p}.Event`, methods: { parse: h.parse } },
  ];
}

export function monitoringDataSourceServices(h: MonitoringDataSourceHandlers): ServiceHandlers[] {
  const p = PACKAGES.monitoring;
  return [
    { service: `${p}.DataSource`, methods: { init: h.init, verify: h.verify ?? accept } },
    { service: `${p}.Metric`, methods: { list: h.listMetrics, get_data: h.getMetricData } },
    { service: `${p}.Log`, methods: { list: h.listLogs } },
  ];
}

export function externalAuthServices(h: ExternalAuthHandlers): ServiceHandlers[] {
  return [{ service: `${PACKAGES.identity}.ExternalAuth`, methods: { init: h.init, authorize: h.authorize } }];
}

/** Serves a cost data source plugin (see servePlugin for the options and the answer). */
export const serveCostDataSource = (h: CostDataSourceHandlers, o?: ServeOptions): Promise<PluginServer> => servePlugin(costDataSourceServices(h), o);
/** Serves a monitoring webhook plugin. */
export const serveMonitoringWebhook = (h: MonitoringWebhookHandlers, o?: ServeOptions): Promise<PluginServer> => servePlugin(monitoringWebhookServices(h), o);
/** Serves a monitoring data source plugin. */
export const serveMonitoringDataSource = (h: MonitoringDataSourceHandlers, o?: ServeOptions): Promise<PluginServer> => servePlugin(monitoringDataSourceServices(h), o);
/** Serves an external authentication plugin. */
export const serveAuth = (h: ExternalAuthHandlers, o?: ServeOptions): Promise<PluginServer> => servePlugin(externalAuthServices(h), o);
