import { ChannelPool } from './channels';
import { serverStream, unaryCall, type CallOptions, type CallTarget, type StreamOptions } from './call';
import { pluginClientConfigFromEnv, type CallKind, type PluginClientConfig } from './config';
import { parseEndpoint } from './endpoint';
import { observedCall, observedStream } from './observe';
import type { CoreV1, CostAnalysis, Empty, GrpcHealthV1, Identity, Monitoring } from './generated/messages';
import { PACKAGES, rpcMethod } from './protocol';

/** Clients kept for reuse (see PluginClients.reuse); past this the whole set is made afresh. */
const MAX_MADE = 1024;

type Unary<ReqInput, Res> = (request: ReqInput, options?: CallOptions) => Promise<Res>;
type Stream<ReqInput, Res> = (request: ReqInput, options?: StreamOptions) => AsyncGenerator<Res, void, undefined>;

/** A cost data source plugin (spaceone.api.cost_analysis.plugin). */
export interface CostPluginClient {
  dataSource: {
    init: Unary<CostAnalysis.InitRequestInput, CostAnalysis.PluginInfo>;
    verify: Unary<CostAnalysis.PluginVerifyRequestInput, void>;
  };
  job: {
    getTasks: Unary<CostAnalysis.GetTasksRequestInput, CostAnalysis.TasksInfo>;
  };
  cost: {
    getLinkedAccounts: Unary<CostAnalysis.GetLinkedAccountsRequestInput, CostAnalysis.AccountsInfo>;
    /** One CostsInfo per message, pulled by the consumer (see serverStream). */
    getData: Stream<CostAnalysis.GetDataRequestInput, CostAnalysis.CostsInfo>;
  };
}

/** A monitoring webhook or data source plugin (spaceone.api.monitoring.plugin). */
export interface MonitoringPluginClient {
  webhook: {
    init: Unary<Monitoring.WebhookInitRequestInput, Monitoring.WebhookPluginInfo>;
    verify: Unary<Monitoring.WebhookPluginVerifyRequestInput, void>;
  };
  event: {
    parse: Unary<Monitoring.ParseRequestInput, Monitoring.EventsInfo>;
  };
  dataSource: {
    init: Unary<Monitoring.InitRequestInput, Monitoring.PluginInfo>;
    verify: Unary<Monitoring.PluginVerifyRequestInput, void>;
  };
  metric: {
    list: Unary<Monitoring.MetricRequestInput, Monitoring.MetricsInfo>;
    getData: Unary<Monitoring.MetricDataRequestInput, Monitoring.MetricDataInfo>;
  };
  log: {
    list: Stream<Monitoring.LogRequestInput, Monitoring.LogsDataInfo>;
  };
}

/** An external authentication plugin (spaceone.api.identity.plugin.ExternalAuth). */
export interface IdentityPluginClient {
  externalAuth: {
    init: Unary<Identity.InitRequestInput, Identity.PluginInfo>;
    authorize: Unary<Identity.AuthorizeRequestInput, Identity.UserInfo>;
  };
}

/**
 * The clients of upstream's plugin protocol, shared by the modules: one per process (it owns the
 * channels; `close()` at shutdown). `cost(endpoint)`, `monitoring(endpoint)` and `identity(endpoint)`
 * are cheap: the channel of an endpoint is opened at its first call and reused. Every failure is an
 * ApiError envelope (docs/decisions/plugins.md, "Errors"); an endpoint that is not grpc:// or grpcs://
 * is refused with ERROR_INVALID_PLUGIN_ENDPOINT before anything is sent. Every call is observed
 * (`platform_plugin_call_duration_seconds`, a span while traced) under the plugin's id, `pluginId` of
 * `cost(endpoint, pluginId)` and the others, or its endpoint's host:port when none is given.
 */
export class PluginClients {
  private readonly pool: ChannelPool;
  /** The clients made for (kind, plugin id, endpoint): a delivery's parse reuses them (no URL parse, no method look-ups per call). */
  private readonly made = new Map<string, unknown>();

  constructor(readonly config: PluginClientConfig = pluginClientConfigFromEnv()) {
    this.pool = new ChannelPool(config);
  }

  /** Channels open now. */
  get openChannels(): number {
    return this.pool.size;
  }

  cost(endpoint: string, pluginId?: string): CostPluginClient {
    return this.reuse('cost', endpoint, pluginId, () => this.makeCost(endpoint, pluginId));
  }

  monitoring(endpoint: string, pluginId?: string): MonitoringPluginClient {
    return this.reuse('monitoring', endpoint, pluginId, () => this.makeMonitoring(endpoint, pluginId));
  }

  identity(endpoint: string, pluginId?: string): IdentityPluginClient {
    return this.reuse('identity', endpoint, pluginId, () => this.makeIdentity(endpoint, pluginId));
  }

  private reuse<T>(kind: string, endpoint: string, pluginId: string | undefined, make: () => T): T {
    const key = `${kind}\n${pluginId ?? ''}\n${endpoint}`;
    let c = this.made.get(key) as T | undefined;
    if (c === undefined) {
      c = make(); // an invalid endpoint throws here, and nothing is kept
      if (this.made.size >= MAX_MADE) this.made.clear(); // bounded: endpoints come and go with publishes
      this.made.set(key, c);
    }
    return c;
  }

  private makeCost(endpoint: string, pluginId?: string): CostPluginClient {
    const c = this.bind(endpoint, PACKAGES.costAnalysis, pluginId);
    return {
      dataSource: { init: c.unary('DataSource', 'init', 'init'), verify: c.empty('DataSource', 'verify', 'verify') },
      job: { getTasks: c.unary('Job', 'get_tasks', 'getTasks') },
      cost: { getLinkedAccounts: c.unary('Cost', 'get_linked_accounts', 'getLinkedAccounts'), getData: c.stream('Cost', 'get_data') },
    };
  }

  private makeMonitoring(endpoint: string, pluginId?: string): MonitoringPluginClient {
    const c = this.bind(endpoint, PACKAGES.monitoring, pluginId);
    return {
      webhook: { init: c.unary('Webhook', 'init', 'init'), verify: c.empty('Webhook', 'verify', 'verify') },
      event: { parse: c.unary('Event', 'parse', 'parse') },
      dataSource: { init: c.unary('DataSource', 'init', 'init'), verify: c.empty('DataSource', 'verify', 'verify') },
      metric: { list: c.unary('Metric', 'list', 'metric'), getData: c.unary('Metric', 'get_data', 'metric') },
      log: { list: c.stream('Log', 'list') },
    };
  }

  private makeIdentity(endpoint: string, pluginId?: string): IdentityPluginClient {
    const c = this.bind(endpoint, PACKAGES.identity, pluginId);
    return { externalAuth: { init: c.unary('ExternalAuth', 'init', 'init'), authorize: c.unary('ExternalAuth', 'authorize', 'authorize') } };
  }

  /** The plugin's gRPC health (grpc.health.v1): SERVING when it is ready; `service` '' is the server as a whole. */
  async health(endpoint: string, service = '', options?: CallOptions): Promise<GrpcHealthV1.HealthCheckResponse['status']> {
    const check = this.bind(endpoint, PACKAGES.health).unary<GrpcHealthV1.HealthCheckRequestInput, GrpcHealthV1.HealthCheckResponse>('Health', 'Check', 'health');
    return (await check({ service }, options)).status;
  }

  /** The plugin server's version (spaceone.api.core.v1.ServerInfo). */
  async version(endpoint: string, options?: CallOptions): Promise<string> {
    const get = this.bind(endpoint, PACKAGES.core).unary<Empty, CoreV1.VersionInfo>('ServerInfo', 'get_version', 'health');
    return (await get({}, options)).version;
  }

  /** Closes every channel (at shutdown); calls in flight fail with 503. */
  close(): void {
    this.pool.close();
  }

  private bind(endpoint: string, pkg: string, pluginId?: string) {
    const target: CallTarget = { pool: this.pool, config: this.config, endpoint: parseEndpoint(endpoint) };
    const id = pluginId ?? target.endpoint.target;
    const depth = this.config.maxJsonDepth;
    const timeout = (kind: CallKind, o?: CallOptions) => o?.timeoutMs ?? this.config.timeouts[kind];
    return {
      unary: <ReqInput, Res>(service: string, name: string, kind: CallKind): Unary<ReqInput, Res> => {
        const m = rpcMethod<unknown, ReqInput, Res, unknown>(`${pkg}.${service}`, name, depth);
        return (request, o) => observedCall(id, `${service}.${name}`, () => unaryCall(target, m, request, timeout(kind, o), o?.signal));
      },
      empty: <ReqInput>(service: string, name: string, kind: CallKind): Unary<ReqInput, void> => {
        const m = rpcMethod<unknown, ReqInput, Empty, unknown>(`${pkg}.${service}`, name, depth);
        return async (request, o) => {
          await observedCall(id, `${service}.${name}`, () => unaryCall(target, m, request, timeout(kind, o), o?.signal));
        };
      },
      stream: <ReqInput, Res>(service: string, name: string): Stream<ReqInput, Res> => {
        const m = rpcMethod<unknown, ReqInput, Res, unknown>(`${pkg}.${service}`, name, depth);
        return (request, o) => observedStream(id, `${service}.${name}`, () => serverStream(target, m, request, o));
      },
    };
  }
}
