import type { PlatformClient } from '@platform/client';
import { UsageError, valueOf, type ParsedArgs } from './args';

export const PUBLISH_USAGE = `  publish-supervisor --name N --hostname H --plugin ID@VERSION=grpc://host:port [--plugin ...] [--public]
        records where plugin containers answer (the supervisor's secret from PLATFORM_SUPERVISOR_SECRET)`;

/** `plugin-id@1.2.0=grpc://host:50051` as a published plugin. */
export function parsePluginArg(v: string) {
  const m = /^([^@=\s]+)@([^@=\s]+)=(\S+)$/.exec(v);
  if (!m) throw new UsageError(`--plugin ${v}: ID@VERSION=grpc://host:port is needed`);
  return { plugin_id: m[1], version: m[2], state: 'ACTIVE', endpoint: m[3] };
}

/**
 * `publish-supervisor`: a supervisor (an operator's script, a Kubernetes Job) publishes its plugins.
 * The secret comes only from the environment, never a flag: a flag shows in `ps` and shell history.
 */
export async function publishSupervisor(a: ParsedArgs, env: NodeJS.ProcessEnv, client: PlatformClient) {
  const name = valueOf(a, 'name');
  const hostname = valueOf(a, 'hostname');
  if (!name || !hostname) throw new UsageError('publish-supervisor needs --name and --hostname');
  const secret = env.PLATFORM_SUPERVISOR_SECRET;
  if (!secret) throw new UsageError('publish-supervisor needs the supervisor’s secret in PLATFORM_SUPERVISOR_SECRET');
  const plugins = (a.values.get('plugin') ?? []).map(parsePluginArg);
  return client.callPath('/plugin/v1/supervisor/publish', {
    name,
    hostname,
    secret_key: secret,
    plugin_info: plugins,
    is_public: a.switches.has('public'),
  });
}
