import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import type { Queryable } from '../db';
import type { CostAnalysisConfig } from '../config';
import { isIsoCurrency, isValidRate } from '../currency';
import type { PrismaClient } from '../generated/prisma/client';
import { ExchangeRateRepository } from './repository';
import { toExchangeRateInfo } from './responses';

/** The rates conversions use for a domain, and whether any override is in them. */
export async function effectiveRates(db: Queryable, config: CostAnalysisConfig, domainId: string) {
  const rows = await ExchangeRateRepository.enabled(db, domainId);
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
  private readonly repository: ExchangeRateRepository;

  constructor(
    prisma: PrismaClient,
    private readonly config: CostAnalysisConfig,
  ) {
    this.repository = new ExchangeRateRepository(prisma);
  }

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

  async set(auth: AuthContext, input: { domain_id: string; currency: string; rate: number }) {
    const domainId = auth.domainId;
    const defaultRate = this.supported(input.currency);
    if (input.currency === this.config.exchange.base) {
      throw errors.invalidParameter('currency', `${input.currency} is the base currency; its rate is always 1`);
    }
    if (!isValidRate(input.rate)) throw errors.invalidParameter('rate', 'the rate must be a positive number');
    const o = await this.repository.set(domainId, input.currency, input.rate);
    return toExchangeRateInfo(domainId, input.currency, defaultRate, o);
  }

  async reset(auth: AuthContext, input: { domain_id: string; currency: string }) {
    const domainId = auth.domainId;
    const defaultRate = this.supported(input.currency);
    await this.repository.delete(domainId, input.currency);
    return toExchangeRateInfo(domainId, input.currency, defaultRate, undefined);
  }

  private async changeState(auth: AuthContext, input: { domain_id: string; currency: string }, state: 'ENABLED' | 'DISABLED') {
    const domainId = auth.domainId;
    const defaultRate = this.supported(input.currency);
    // upstream: only an override has a state to change.
    if (!(await this.repository.setState(domainId, input.currency, state))) throw errors.wrongState('ERROR_CHANGE_STATE', `Exchange rate of ${input.currency} has no override to ${state === 'ENABLED' ? 'enable' : 'disable'}; set one first.`);
    return toExchangeRateInfo(domainId, input.currency, defaultRate, (await this.repository.find(domainId, input.currency)) ?? undefined);
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
    return toExchangeRateInfo(domainId, input.currency, defaultRate, (await this.repository.find(domainId, input.currency)) ?? undefined);
  }

  async list(auth: AuthContext) {
    const domainId = auth.domainId;
    const overrides = new Map((await this.repository.findAll(domainId)).map((o) => [o.currency, o]));
    const results = Object.entries(this.config.exchange.defaults).map(([currency, rate]) => toExchangeRateInfo(domainId, currency, rate, overrides.get(currency)));
    return { results, total_count: results.length };
  }
}
