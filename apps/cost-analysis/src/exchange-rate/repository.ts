import type { Queryable } from '../db';
import type { PrismaClient } from '../generated/prisma/client';

/** A domain's override of a currency's rate, as the conversions read it (`exchange_rate` row). */
export interface ExchangeRateOverride {
  currency: string;
  rate: number;
  state: string;
}

/** Every read and write of the `exchange_rate` table (a domain's overrides of the default rates). */
export class ExchangeRateRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** The domain's ENABLED overrides, on `db` (the pool or the transaction of a rebuild). */
  static async enabled(db: Queryable, domainId: string): Promise<ExchangeRateOverride[]> {
    const { rows } = await db.query<ExchangeRateOverride>(`SELECT currency, rate, state FROM exchange_rate WHERE domain_id = $1 AND state = 'ENABLED'`, [domainId]);
    return rows;
  }

  find(domainId: string, currency: string) {
    return this.prisma.exchangeRate.findUnique({ where: { domain_id_currency: { domain_id: domainId, currency } } });
  }

  findAll(domainId: string) {
    return this.prisma.exchangeRate.findMany({ where: { domain_id: domainId } });
  }

  /** Creates the override or sets its rate, ENABLED again. */
  set(domainId: string, currency: string, rate: number) {
    return this.prisma.exchangeRate.upsert({
      where: { domain_id_currency: { domain_id: domainId, currency } },
      create: { domain_id: domainId, currency, rate },
      update: { rate, state: 'ENABLED', updated_at: new Date() },
    });
  }

  async delete(domainId: string, currency: string): Promise<void> {
    await this.prisma.exchangeRate.deleteMany({ where: { domain_id: domainId, currency } });
  }

  /** Sets the override's state; false when the domain has no override of the currency. */
  async setState(domainId: string, currency: string, state: 'ENABLED' | 'DISABLED'): Promise<boolean> {
    const { count } = await this.prisma.exchangeRate.updateMany({ where: { domain_id: domainId, currency }, data: { state, updated_at: new Date() } });
    return count > 0;
  }
}
