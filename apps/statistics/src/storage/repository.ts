import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A transaction's client (or the client itself, outside one). */
export type Tx = Prisma.TransactionClient;

/** A `storage` row as stored. */
export interface StorageRow {
  domain_id: string;
  storage_id: string;
  name: string;
  state: string;
  options: unknown;
  capability: unknown;
  plugin_info: unknown;
  tags: unknown;
  user_id: string;
  created_at: Date;
}

/** plugin_info as stored: never a secret value, only the secret's id. */
export interface StoredPluginInfo {
  plugin_id: string;
  version: string;
  options: Record<string, unknown>;
  secret_id: string;
  metadata: Record<string, unknown>;
}

/** What a new storage is stored with. */
export interface NewStorage {
  domain_id: string;
  storage_id: string;
  name: string;
  state: string;
  options: Record<string, unknown>;
  capability: Record<string, unknown>;
  plugin_info: StoredPluginInfo;
  tags: Record<string, unknown>;
  user_id: string;
}

/** A sealed secret as stored (the sealing is the service's). */
export type NewSecret = Parameters<Tx['secret']['create']>[0]['data'];

const json = (v: unknown) => v as Prisma.InputJsonValue;
const key = (domainId: string, storageId: string) => ({ domain_id_storage_id: { domain_id: domainId, storage_id: storageId } });

/** Every read and write of the `storage` and `secret` tables (list and stat read through fields.ts). */
export class StorageRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs fn in one transaction; the methods take its client. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(fn);
  }

  /** The storage in the domain; with lock, locked for the transaction. */
  async find(domainId: string, storageId: string, tx: Tx = this.prisma, lock = false): Promise<StorageRow | null> {
    if (lock) return (await tx.$queryRawUnsafe<StorageRow[]>('SELECT * FROM storage WHERE domain_id = $1 AND storage_id = $2 FOR UPDATE', domainId, storageId))[0] ?? null;
    return tx.storage.findUnique({ where: key(domainId, storageId) });
  }

  insert(tx: Tx, s: NewStorage): Promise<StorageRow> {
    return tx.storage.create({
      data: { ...s, options: json(s.options), capability: json(s.capability), plugin_info: json(s.plugin_info), tags: json(s.tags) },
    });
  }

  update(domainId: string, storageId: string, changes: { name?: string; tags?: Record<string, unknown> }): Promise<StorageRow> {
    return this.prisma.storage.update({
      where: key(domainId, storageId),
      data: { ...(changes.name !== undefined && { name: changes.name }), ...(changes.tags !== undefined && { tags: json(changes.tags) }) },
    });
  }

  setPlugin(tx: Tx, domainId: string, storageId: string, p: { plugin_info: StoredPluginInfo; options: Record<string, unknown>; capability: Record<string, unknown> }): Promise<StorageRow> {
    return tx.storage.update({
      where: key(domainId, storageId),
      data: { plugin_info: json(p.plugin_info), options: json(p.options), capability: json(p.capability) },
    });
  }

  setState(domainId: string, storageId: string, state: string): Promise<StorageRow> {
    return this.prisma.storage.update({ where: key(domainId, storageId), data: { state } });
  }

  /** Removes the storage and its secrets. */
  async delete(tx: Tx, domainId: string, storageId: string): Promise<void> {
    await tx.secret.deleteMany({ where: { domain_id: domainId, storage_id: storageId } });
    await tx.storage.delete({ where: key(domainId, storageId) });
  }

  async insertSecret(tx: Tx, secret: NewSecret): Promise<void> {
    await tx.secret.create({ data: secret });
  }

  findSecret(domainId: string, secretId: string, tx: Tx = this.prisma) {
    return tx.secret.findUnique({ where: { domain_id_secret_id: { domain_id: domainId, secret_id: secretId } } });
  }

  /** Deletes the storage's secrets but the one kept. */
  async deleteSecretsBut(tx: Tx, domainId: string, storageId: string, keptSecretId: string): Promise<void> {
    await tx.secret.deleteMany({ where: { domain_id: domainId, storage_id: storageId, NOT: { secret_id: keptSecretId } } });
  }
}
