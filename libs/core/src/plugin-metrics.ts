import { Histogram } from 'prom-client';

/** The latency buckets of a plugin call (seconds): a health check in ms, a cost collection's stream in minutes. */
const PLUGIN_CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * `platform_plugin_call_duration_seconds{plugin_id, method, code}`: every call a process makes to a
 * plugin, by its outcome (`OK` or the error's code). One histogram per process, in no registry of its
 * own: libs/http puts it in the `/metrics` of every app and worker (registerProcessMetrics).
 */
export const pluginCallDuration = new Histogram({
  name: 'platform_plugin_call_duration_seconds',
  help: 'Latency of each call to a plugin, by plugin, method and outcome (OK or the error code)',
  labelNames: ['plugin_id', 'method', 'code'],
  buckets: PLUGIN_CALL_BUCKETS,
  registers: [],
});

/** What a plugin client reports of each call it made: the plugin, the method (`DataSource.init`), `OK` or the error code, the seconds it took. */
export function observePluginCall(pluginId: string, method: string, code: string, seconds: number): void {
  pluginCallDuration.observe({ plugin_id: pluginId, method, code }, seconds);
}
