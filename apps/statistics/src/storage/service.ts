import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { resolveOnly, runList, runStat, applyOnly, type Condition, type Query, type StatisticsQuery, applyGetOnly, eqConditions } from '@platform/query';
import type { StatisticsDeps } from '../deps';
import { parseAt, verifyFailure, type Struct } from '../plugin/registry';
import { storageResource } from './fields';
import { StorageRepository, type StorageRow, type StoredPluginInfo, type Tx } from './repository';
import { EMPTY_PLUGIN, toStorageInfo } from './responses';

export interface PluginRequest {
  plugin_id: string;
  version: string;
  options: Struct;
  secret_data: Struct;
  schema?: string;
}

export interface ListInput {
  query?: Query;
  storage_id?: string;
  name?: string;
  state?: string;
  user_id?: string;
}

/** The additional authenticated data of a sealed secret: it opens only as this domain's this secret. */
const aad = (domainId: string, secretId: string) => `${domainId}:${secretId}`;

export class StorageService {
  private readonly storages: StorageRepository;

  constructor(private readonly deps: StatisticsDeps) {
    this.storages = new StorageRepository(deps.prisma);
  }

  /** The storage in the caller's domain, else ERROR_NOT_FOUND (never "exists but not yours"). */
  private async find(auth: AuthContext, storageId: string, tx?: Tx, lock = false): Promise<StorageRow> {
    const s = await this.storages.find(auth.domainId, storageId, tx, lock);
    if (!s) throw errors.notFound('storage_id', storageId);
    return s;
  }

  private pluginOf(s: StorageRow): StoredPluginInfo {
    const p = s.plugin_info as Partial<StoredPluginInfo> | null;
    if (!p?.plugin_id) throw errors.wrongState('ERROR_STORAGE_HAS_NO_PLUGIN', `Storage ${s.storage_id} was registered without a plugin.`);
    return { ...EMPTY_PLUGIN, ...p };
  }

  /** Seals secret_data as a new secret of the storage; returns its id. */
  private async createSecret(tx: Tx, domainId: string, storageId: string, schema: string, secretData: Struct): Promise<string> {
    const secret_id = generateId('secret');
    await this.storages.insertSecret(tx, { domain_id: domainId, secret_id, storage_id: storageId, schema, ...this.deps.secrets.seal(secretData, aad(domainId, secret_id)) });
    return secret_id;
  }

  async register(auth: AuthContext, input: { name: string; user_id: string; plugin_info?: PluginRequest; tags?: Struct }) {
    if (input.user_id !== auth.userId) {
      throw errors.permissionDenied(`Permission denied. (key = user_id, reason = ${input.user_id} is not the user of the access token)`);
    }
    const storage_id = generateId('storage');
    let plugin: { info: Omit<StoredPluginInfo, 'secret_id'>; options: Struct; capability: Struct; schema: string; secret: Struct } | undefined;
    if (input.plugin_info) {
      const req = input.plugin_info;
      const def = this.deps.plugins.get(req.plugin_id);
      const version = this.deps.plugins.version(def, req.version, 'plugin_info.version');
      const options = parseAt(def.options, req.options, ['plugin_info', 'options']);
      const schema = this.deps.plugins.schema(def, req.schema, 'plugin_info.schema');
      const secret = parseAt(def.secretData, req.secret_data, ['plugin_info', 'secret_data']);
      plugin = {
        info: { plugin_id: def.plugin_id, version, options: req.options, metadata: def.metadata(version, options) },
        options,
        capability: def.capability,
        schema,
        secret,
      };
    }
    const row = await this.storages.transaction(async (tx) => {
      const secret_id = plugin ? await this.createSecret(tx, auth.domainId, storage_id, plugin.schema, plugin.secret) : '';
      return this.storages.insert(tx, {
        domain_id: auth.domainId,
        storage_id,
        name: input.name,
        state: 'ENABLED',
        options: plugin?.options ?? {},
        capability: plugin?.capability ?? {},
        plugin_info: plugin ? { ...plugin.info, secret_id } : EMPTY_PLUGIN,
        tags: input.tags ?? {},
        user_id: input.user_id,
      });
    });
    return toStorageInfo(row);
  }

  async update(auth: AuthContext, input: { storage_id: string; name?: string; tags?: Struct }) {
    const s = await this.find(auth, input.storage_id);
    const updated = await this.storages.update(s.domain_id, s.storage_id, { name: input.name, tags: input.tags });
    return toStorageInfo(updated);
  }

  /**
   * New version, options and/or secret_data. The plugin's metadata is refreshed (upstream re-inits the
   * plugin); new secret_data replaces the old secret (a new secret_id, the old one deleted).
   */
  async updatePlugin(auth: AuthContext, input: { storage_id: string; version?: string; options?: Struct; secret_data?: Struct }) {
    const row = await this.storages.transaction(async (tx) => {
      const s = await this.find(auth, input.storage_id, tx, true);
      const current = this.pluginOf(s);
      const def = this.deps.plugins.get(current.plugin_id, 'plugin_info.plugin_id');
      const version = input.version !== undefined ? this.deps.plugins.version(def, input.version, 'version') : current.version;
      const given = input.options ?? current.options;
      const options = parseAt(def.options, given, input.options !== undefined ? ['options'] : ['plugin_info', 'options']);
      let secret_id = current.secret_id;
      if (input.secret_data !== undefined) {
        const secret = parseAt(def.secretData, input.secret_data, ['secret_data']);
        const old = secret_id ? await this.storages.findSecret(s.domain_id, secret_id, tx) : null;
        secret_id = await this.createSecret(tx, s.domain_id, s.storage_id, old?.schema ?? this.deps.plugins.schema(def, undefined, 'schema'), secret);
        await this.storages.deleteSecretsBut(tx, s.domain_id, s.storage_id, secret_id);
      }
      const plugin_info: StoredPluginInfo = { plugin_id: def.plugin_id, version, options: given, secret_id, metadata: def.metadata(version, options) };
      return this.storages.setPlugin(tx, s.domain_id, s.storage_id, { plugin_info, options, capability: def.capability });
    });
    return toStorageInfo(row);
  }

  /** Runs the plugin's verify against the real target with the decrypted secret. Empty on success. */
  async verifyPlugin(auth: AuthContext, storageId: string) {
    const s = await this.find(auth, storageId);
    if (s.state !== 'ENABLED') {
      throw errors.wrongState('ERROR_STORAGE_STATE_DISABLED', `Storage ${s.storage_id} is disabled: its plugin may not be used.`);
    }
    const p = this.pluginOf(s);
    const def = this.deps.plugins.get(p.plugin_id, 'plugin_info.plugin_id');
    const secret = p.secret_id ? await this.storages.findSecret(s.domain_id, p.secret_id) : null;
    if (!secret) throw verifyFailure(`the secret of storage ${s.storage_id} is missing`);
    const secretData = this.deps.secrets.open(secret, aad(secret.domain_id, secret.secret_id));
    await def.verify({
      version: p.version,
      options: parseAt(def.options, p.options, ['plugin_info', 'options']),
      secretData,
      schema: secret.schema,
      timeoutMs: this.deps.config.verifyTimeoutMs,
      outbound: this.deps.config.outbound,
    });
  }

  async setState(auth: AuthContext, storageId: string, state: 'ENABLED' | 'DISABLED') {
    const s = await this.find(auth, storageId);
    const updated = await this.storages.setState(s.domain_id, s.storage_id, state);
    return toStorageInfo(updated);
  }

  /** Removes the storage and its secret. */
  async deregister(auth: AuthContext, storageId: string) {
    await this.storages.transaction(async (tx) => {
      const s = await this.find(auth, storageId, tx, true);
      await this.storages.delete(tx, s.domain_id, s.storage_id);
    });
  }

  async get(auth: AuthContext, storageId: string, only?: string[]) {
    return applyGetOnly(toStorageInfo(await this.find(auth, storageId)), only);
  }

  async list(auth: AuthContext, input: ListInput) {
    const scope: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
    scope.push(...eqConditions(input, ['storage_id', 'name', 'state', 'user_id']));
    const { rows, total_count } = await runList(this.deps.reads.for(auth), storageResource, input.query, scope);
    const only = resolveOnly(storageResource, input.query);
    return { results: rows.map((r) => applyOnly(toStorageInfo(r as StorageRow), only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), storageResource, query, [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }]);
  }
}
