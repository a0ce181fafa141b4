import { z } from 'zod';
import { ApiError, errors } from '@platform/errors';
import { zodToApiError } from '@platform/http';
import type { OutboundPolicy } from '@platform/net';

export type Struct = Record<string, unknown>;

export interface VerifyInput {
  version: string;
  /** Effective options (defaults filled). */
  options: Struct;
  secretData: Struct;
  /** The secret schema the storage was registered with ('' when none was named). */
  schema: string;
  timeoutMs: number;
  /** Which private destinations the plugin may reach. */
  outbound: OutboundPolicy;
}

/**
 * A storage plugin: code behind a small interface, as upstream's statistics storage plugin protocol
 * (init → metadata, verify(options, secret_data, schema)). Built-ins register in the registry.
 */
export interface StoragePlugin {
  plugin_id: string;
  name: string;
  /** Known versions, oldest first; the last one is used when a request names none. */
  versions: readonly string[];
  /** The storage's capability (e.g. `supported_schema`, the secret schemas it takes). */
  capability: Struct;
  /** Its options, with defaults: parsing gives the effective options. */
  options: z.ZodType<Struct>;
  /** Its secret_data: the required keys are what it needs to connect. */
  secretData: z.ZodType<Struct>;
  /** Plugin metadata of a version (upstream's init answer). */
  metadata(version: string, options: Struct): Struct;
  /** Checks, against the real target, that the storage can be used; throws the uniform OutboundRefused if not. */
  verify(input: VerifyInput): Promise<void>;
}

/** Parses `value` with `schema`, reporting errors at `path` (e.g. plugin_info.options.port). */
export function parseAt<T>(schema: z.ZodType<T>, value: unknown, path: string[]): T {
  let wrapped: z.ZodType = schema;
  let input: unknown = value;
  for (const key of [...path].reverse()) {
    wrapped = z.object({ [key]: wrapped });
    input = { [key]: input };
  }
  const r = wrapped.safeParse(input);
  if (!r.success) throw zodToApiError(r.error, input);
  let out: any = r.data;
  for (const key of path) out = out[key];
  return out as T;
}

export function verifyFailure(reason: string): ApiError {
  return errors.verifyPluginFailure(reason);
}

export class PluginRegistry {
  private readonly plugins = new Map<string, StoragePlugin>();

  constructor(plugins: StoragePlugin[]) {
    for (const p of plugins) {
      if (this.plugins.has(p.plugin_id)) throw new Error(`storage plugin registered twice: ${p.plugin_id}`);
      if (!p.versions.length) throw new Error(`storage plugin ${p.plugin_id} has no version`);
      this.plugins.set(p.plugin_id, p);
    }
  }

  list(): StoragePlugin[] {
    return [...this.plugins.values()];
  }

  get(pluginId: string, key = 'plugin_info.plugin_id'): StoragePlugin {
    const p = this.plugins.get(pluginId);
    if (!p) throw errors.notFound(key, pluginId);
    return p;
  }

  /** The version asked for, or the latest when none is given. */
  version(plugin: StoragePlugin, version: string | undefined, key: string): string {
    if (version === undefined || version === '') return plugin.versions[plugin.versions.length - 1];
    if (!plugin.versions.includes(version)) {
      throw errors.invalidPluginVersion(key, `Plugin ${plugin.plugin_id} has no version ${version} (known: ${plugin.versions.join(', ')}). (key = ${key})`);
    }
    return version;
  }

  /** The secret schema named by a request: one of the plugin's supported schemas ('' = the plugin's default). */
  schema(plugin: StoragePlugin, schema: string | undefined, key: string): string {
    const supported = (plugin.capability.supported_schema as string[] | undefined) ?? [];
    if (!schema) return supported[0] ?? '';
    if (!supported.includes(schema)) {
      throw errors.invalidParameter(key, `plugin ${plugin.plugin_id} supports the schemas ${supported.join(', ') || '(none)'}`);
    }
    return schema;
  }
}
