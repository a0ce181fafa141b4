import { errors } from '@platform/errors';
import { upgradeModeOf } from '@platform/plugin';

/** How a plugin instance follows new plugin versions: MANUAL stays; AUTO and NONE (proto3's "not set") move to the latest (libs/plugin `upgradeModeOf`). */
export const UPGRADE_MODES = ['AUTO', 'MANUAL', 'NONE'] as const;
export type UpgradeMode = (typeof UPGRADE_MODES)[number];

export type Struct = Record<string, unknown>;

/** One option a plugin takes: its JSON type, whether it is one of the plugin's `required_keys`. */
export interface OptionSpec {
  type: 'string' | 'number' | 'boolean' | 'object' | 'string_list';
  required?: boolean;
  description: string;
}

/** What every plugin is: an id, its versions (oldest first), what it can do and the options it takes. */
export interface PluginBase {
  plugin_id: string;
  name: string;
  provider: string;
  versions: readonly string[];
  capability: Struct;
  options: Record<string, OptionSpec>;
  /** The plugin's metadata for these options (what `init` answers upstream). */
  metadata(options: Struct): Struct;
  /** Checks beyond the option types (e.g. templates that must compile); throws an ApiError. */
  checkOptions?(options: Struct): void;
}

/** Where the error for an option points in the request: `plugin_info.options.<key>`. */
const optionKey = (key: string) => `plugin_info.options.${key}`;

function typeOk(spec: OptionSpec, v: unknown): boolean {
  switch (spec.type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'string_list':
      return Array.isArray(v) && v.every((s) => typeof s === 'string');
  }
}

export const requiredKeys = (p: PluginBase) =>
  Object.entries(p.options)
    .filter(([, s]) => s.required)
    .map(([k]) => k);

/** The plugins of one kind (webhook or data source), looked up by plugin_id. */
export class PluginRegistry<P extends PluginBase> {
  private readonly byId: Map<string, P>;

  constructor(
    readonly kind: string,
    plugins: P[],
  ) {
    this.byId = new Map(plugins.map((p) => [p.plugin_id, p]));
  }

  list(): P[] {
    return [...this.byId.values()];
  }

  /** The built-in of this id, if there is one. */
  find(pluginId: string): P | undefined {
    return this.byId.get(pluginId);
  }

  get(pluginId: string): P {
    const p = this.byId.get(pluginId);
    if (!p) throw errors.notFound('plugin_info.plugin_id', pluginId);
    return p;
  }

  latest(p: P): string {
    return p.versions[p.versions.length - 1];
  }

  /** MANUAL keeps the given version, which must exist; AUTO and NONE follow the latest (libs/plugin `upgradeModeOf`). */
  resolveVersion(p: P, version: string | undefined, mode: UpgradeMode): string {
    if (upgradeModeOf(mode) === 'AUTO') return this.latest(p);
    if (!version) throw errors.requiredParameter('plugin_info.version');
    if (!p.versions.includes(version)) {
      throw errors.invalidPluginVersion('plugin_info.version', `Plugin version is invalid. (plugin_id = ${p.plugin_id}, version = ${version})`);
    }
    return version;
  }

  /** The options satisfy the plugin: required keys present, known keys only, right types. */
  validateOptions(p: P, options: Struct): void {
    for (const key of requiredKeys(p)) {
      if (options[key] === undefined || options[key] === null || options[key] === '') throw errors.requiredParameter(optionKey(key));
    }
    for (const [key, value] of Object.entries(options)) {
      const spec = p.options[key];
      if (!spec) throw errors.invalidParameter(optionKey(key), `unknown option of ${p.plugin_id}`);
      if (!typeOk(spec, value)) throw errors.invalidParameter(optionKey(key), `must be a ${spec.type}`);
    }
    p.checkOptions?.(options);
  }
}
