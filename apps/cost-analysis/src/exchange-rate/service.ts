import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import type { Queryable } from '../db';
import type { CostAnalysisConfig } from '../config';
import { isIsoCurrency, isValidRate } from '../currency';
import type { PrismaClient } from '../generated/prisma/client';

export interface ExchangeRateInfo {
  currency: string;
  rate: number;
  state: 'ENABLED' | 'DISABLED';
  is_default: boolean;
  domain_id: string;
}

interface Override {
  currency: string;
  rate: number;
  state: string;
}

/** One currency as the domain sees it: the override's rate while it is ENABLED, else the default's. */
function effective(domainId: string, currency: string, defaultRate: number, o: Override | undefined): ExchangeRateInfo {
  if (!o) return { currency, rate: defaultRate, state: 'ENABLED', is_default: true, domain_id: domainId };
  const enabled = o.state === 'ENABLED';
  return { currency, rate: enabled ? o.rate : defaultRate, state: enabled ? 'ENABLED' : 'DISABLED', is_default: !enabled, domain_id: domainId };
}

/** The rates conversions use for a domain, and whether any override is in them. */
export async function effectiveRates(db: Queryable, config: CostAnalysisConfig, domainId: string) {
  const { rows } = await db.query<Override>(`SELECT currency, rate, state FROM exchange_rate WHERE domain_id = $1 AND state = 'ENABLED'`, [domainId]);
  const rates = { ...config.exchange.defaults };
  let overridden = false;
  for (const r of rows) {
    if (r.currency in rates) {
      rates[r.currency] = r.rate;
      overridden = true;
    }
  }
  return { rates, overridden };
}

export class ExchangeRateService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly config: CostAnalysisConfig,
  ) {}

  /** A currency the default domain has a rate for (upstream's ERROR_UNSUPPORTED_CURRENCY otherwise). */
  private supported(currency: string): number {
    if (!isIsoCurrency(currency)) throw errors.invalidParameter('currency', `${currency} is not an ISO 4217 currency code`);
    const rate = this.config.exchange.defaults[currency];
    if (rate === undefined) {
      throw errors.badRequest(
        'ERROR_UNSUPPORTED_CURRENCY',
        `Currency ${currency} is not supported. (supported_currency = ${Object.keys(this.config.exchange.defaults).join(', ')})`,
      );
    }
    return rate;
  }

  private async override(domainId: string, currency: string) {
    return this.prisma.exchangeRate.findUnique({ where: { domain_id_currency: { domain_id: domainId, currency } } });
  }

  async set(auth: AuthContext, input: { domain_id: string; currency: string; rate: number }) {
    const domainId = auth.domainId;
    const defaultRate = this.supported(input.currency);
    if (input.currency === this.config.exchange.base) {
      throw errors.invalidParameter('currency', `${input.currency} is the base currency; its rate is always 1`);
    }
    if (!isValidRate(input.rate)) throw errors.invalidParameter('rate', 'the rate must be a positive number');
    const o = await this.prisma.exchangeRate.upsert({
      where: { domain_id_currency: { domain_id: domainId, currency: input.currency } },
      create: { domain_id: domainId, currency: input.currency, rate: input.rate },
      update: { rate: input.rate, state: 'ENABLED', updated_at: new Date() },
    });
    return effective(domainId, input.currency, defaultRate, o);
  }

  async reset(auth: AuthContext, input: { domain_id: string; currency: string }) {
    const domainId = auth.domainId;
    const defaultRate = this.supported(input.currency);
    await this.prisma.exchangeRate.deleteMany({ where: { domain_id: domainId, currency: input.currency } });
    return effective(domainId, input.currency, defaultRate, undefined);
  }

  private async changeState(auth: AuthContext, input: { domain_id: string; currency: string }, state: 'ENABLED' | 'DISABLED') {
    const domainId = auth.domainId;
    const defaultRate = this.supported(input.currency);
    const { count } = await this.prisma.exchangeRate.updateMany({
      where: { domain_id: domainId, currency: input.currency },
      data: { state, updated_at: new Date() },
    });
    // upstream: only an override has a state to change.
    if (count === 0) throw errors.wrongState('ERROR_CHANGE_STATE', `Exchange rate of ${input.currency} has no override to ${state === 'ENABLED' ? 'enable' : 'disable'}; set one first.`);
    return effective(domainId, input.currency, defaultRate, (await this.override(domainId, input.currency)) ?? undefined);
  }

  enable(auth: AuthContext, input: { domain_id: string; currency: string }) {
    return this.changeState(auth, input, 'ENABLED');
  }

  disable(auth: AuthContext, input: { domain_id: string; currency: string }) {
    return this.changeState(auth, input, 'DISABLED');
  }

  async get(auth: AuthContext, input: { domain_id: string; currency: string }) {
    const domainId = auth.domainId;
    const defaultRate = this.supported(input.currency);
    return effective(domainId, input.currency, defaultRate, (await this.override(domainId, input.currency)) ?? undefined);
  }

  async list(auth: AuthContext) {
    const domainId = auth.domainId;
    const overrides = new Map((await this.prisma.exchangeRate.findMany({ where: { domain_id: domainId } })).map((o) => [o.currency, o]));
    const results = Object.entries(this.config.exchange.defaults).map(([currency, rate]) => effective(domainId, currency, rate, overrides.get(currency)));
    return { results, total_count: results.length };
  }
}
