import type { PrismaClient } from '../generated/prisma/client';
import { Prisma } from '../generated/prisma/client';

/** An `external_auth` row as stored (secret_data sealed; never answered). */
export interface ExternalAuthRow {
  domain_id: string;
  state: string;
  plugin_id: string;
  version: string;
  upgrade_mode: string;
  options: unknown;
  metadata: unknown;
  secret_data: unknown;
  schema_id: string;
  updated_at: Date;
}

/**
 * A domain's external auth as set: what `set` stores (replacing the whole of what was set before) and
 * token/issue reads when it is ENABLED. `secret_data` stays sealed (none: absent or null).
 */
export interface DomainExternalAuth {
  domain_id: string;
  state: string;
  plugin_id: string;
  version: string;
  upgrade_mode: string;
  options: Record<string, unknown>;
  metadata: Record<string, unknown>;
  secret_data: unknown;
  schema_id: string;
}

/** Every read and write of the `external_auth` table (one row per domain). */
export class ExternalAuthRepository {
  constructor(private readonly prisma: PrismaClient) {}

  find(domainId: string): Promise<ExternalAuthRow | null> {
    return this.prisma.externalAuth.findUnique({ where: { domain_id: domainId } });
  }

  /** Sets the domain's configuration, replacing the whole of what was set before. */
  save(c: DomainExternalAuth): Promise<ExternalAuthRow> {
    const data = {
      state: c.state,
      plugin_id: c.plugin_id,
      version: c.version,
      upgrade_mode: c.upgrade_mode,
      options: c.options as Prisma.InputJsonValue,
      metadata: c.metadata as Prisma.InputJsonValue,
      secret_data: c.secret_data ? (c.secret_data as Prisma.InputJsonValue) : Prisma.DbNull,
      schema_id: c.schema_id,
      updated_at: new Date(),
    };
    return this.prisma.externalAuth.upsert({ where: { domain_id: c.domain_id }, create: { domain_id: c.domain_id, ...data }, update: data });
  }

  /** Deletes the domain's configuration; false when none was set. */
  async delete(domainId: string): Promise<boolean> {
    const { count } = await this.prisma.externalAuth.deleteMany({ where: { domain_id: domainId } });
    return count > 0;
  }
}
