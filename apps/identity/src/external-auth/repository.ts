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

/** A domain's whole configuration as set (the sealed secret, or none). */
export interface ExternalAuthConfig {
  state: string;
  plugin_id: string;
  version: string;
  upgrade_mode: string;
  options: Record<string, unknown>;
  metadata: Record<string, unknown>;
  sealedSecret: unknown;
  schema_id: string;
}

/** Every read and write of the `external_auth` table (one row per domain). */
export class ExternalAuthRepository {
  constructor(private readonly prisma: PrismaClient) {}

  find(domainId: string): Promise<ExternalAuthRow | null> {
    return this.prisma.externalAuth.findUnique({ where: { domain_id: domainId } });
  }

  /** Sets the domain's configuration, replacing the whole of what was set before. */
  save(domainId: string, c: ExternalAuthConfig): Promise<ExternalAuthRow> {
    const data = {
      state: c.state,
      plugin_id: c.plugin_id,
      version: c.version,
      upgrade_mode: c.upgrade_mode,
      options: c.options as Prisma.InputJsonValue,
      metadata: c.metadata as Prisma.InputJsonValue,
      secret_data: c.sealedSecret ? (c.sealedSecret as Prisma.InputJsonValue) : Prisma.DbNull,
      schema_id: c.schema_id,
      updated_at: new Date(),
    };
    return this.prisma.externalAuth.upsert({ where: { domain_id: domainId }, create: { domain_id: domainId, ...data }, update: data });
  }

  /** Deletes the domain's configuration; false when none was set. */
  async delete(domainId: string): Promise<boolean> {
    const { count } = await this.prisma.externalAuth.deleteMany({ where: { domain_id: domainId } });
    return count > 0;
  }
}
