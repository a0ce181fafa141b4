// What every plugin call reports (issue #31): its latency and outcome to
// platform_plugin_call_duration_seconds (libs/core observePluginCall), and a client span while a sampled
// operation is traced (libs/telemetry). The request's values are never part of either.
import { observePluginCall } from '@platform/core';
import { endSpan, startClientSpan, type ClientSpan } from '@platform/telemetry';

/** The outcome label: `OK`, or the envelope's code (`ERROR_PLUGIN_UNAVAILABLE`): a bounded set. */
const codeOf = (e: unknown) => {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'ERROR_UNKNOWN';
};

function begin(pluginId: string, method: string) {
  const span: ClientSpan | undefined = startClientSpan(`plugin ${method}`, { 'rpc.system': 'grpc', 'rpc.method': method, 'plugin.id': pluginId });
  const started = performance.now();
  return (error?: unknown) => {
    const code = error === undefined ? 'OK' : codeOf(error);
    observePluginCall(pluginId, method, code, (performance.now() - started) / 1000);
    if (span) endSpan(span, error === undefined ? undefined : { code });
  };
}

/** A unary call, observed. */
export async function observedCall<T>(pluginId: string, method: string, call: () => Promise<T>): Promise<T> {
  const end = begin(pluginId, method);
  try {
    const out = await call();
    end();
    return out;
  } catch (e) {
    end(e ?? new Error('plugin call failed'));
    throw e;
  }
}

/** A server stream, observed from its first pull to its end (all read, failed, or left by the consumer: `OK`). */
export async function* observedStream<T>(pluginId: string, method: string, stream: () => AsyncGenerator<T, void, undefined>): AsyncGenerator<T, void, undefined> {
  const end = begin(pluginId, method);
  let failed: unknown;
  try {
    yield* stream();
  } catch (e) {
    failed = e ?? new Error('plugin call failed');
    throw e;
  } finally {
    end(failed);
  }
}
