import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A `webhook` row as stored (`revision` is bumped by every change; the Redis copy compares it). */
export interface WebhookRow {
  domain_id: string;
  webhook_id: string;
  workspace_id: string;
  project_id: string;
  name: string;
  state: string;
  access_key: string;
  webhook_url: string;
  capability: unknown;
  plugin_info: unknown;
  tags: unknown;
  requests_total: bigint | string | number;
  requests_error: bigint | string | number;
  created_at: Date;
  revision?: bigint | string | number;
}

/** What a new webhook is stored with (state, counters, revision and created_at take their defaults). */
export interface NewWebhook {
  domain_id: string;
  webhook_id: string;
  workspace_id: string;
  project_id: string;
  name: string;
  access_key: string;
  webhook_url: string;
  capability: Prisma.InputJsonValue;
  plugin_info: Prisma.InputJsonValue;
  tags: Prisma.InputJsonValue;
}

/** Every read and write of the `webhook` table (the query DSL's list and stat read through fields.ts). */
export class WebhookRepository {
  constructor(private readonly prisma: PrismaClient) {}

  find(domainId: string, webhookId: string) {
    return this.prisma.webhook.findUnique({ where: { domain_id_webhook_id: { domain_id: domainId, webhook_id: webhookId } } });
  }

  create(data: NewWebhook) {
    return this.prisma.webhook.create({ data });
  }

  /** Applies the change and bumps the revision (what the Redis copy compares). */
  update(row: Pick<WebhookRow, 'domain_id' | 'webhook_id'>, data: Prisma.WebhookUpdateInput) {
    return this.prisma.webhook.update({
      where: { domain_id_webhook_id: { domain_id: row.domain_id, webhook_id: row.webhook_id } },
      data: { ...data, revision: { increment: 1 } },
    });
  }

  delete(row: Pick<WebhookRow, 'domain_id' | 'webhook_id'>) {
    return this.prisma.webhook.delete({ where: { domain_id_webhook_id: { domain_id: row.domain_id, webhook_id: row.webhook_id } } });
  }
}
