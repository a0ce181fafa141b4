import { z } from 'zod';
import { listOf } from '@platform/http';
import type { ExchangeRateOverride } from './repository';

/** ExchangeRateInfo: the rate a domain uses for a currency (`is_default`: the default domain's). */
export const ExchangeRateInfo = z
  .strictObject({ currency: z.string(), rate: z.number(), state: z.enum(['ENABLED', 'DISABLED']), is_default: z.boolean(), domain_id: z.string() })
  .meta({ id: 'ExchangeRateInfo' });

export const ExchangeRatesInfo = listOf(ExchangeRateInfo).meta({ id: 'ExchangeRatesInfo' });

/** ExchangeRateInfo as the service answers it. */
export interface EffectiveRate {
  currency: string;
  rate: number;
  state: 'ENABLED' | 'DISABLED';
  is_default: boolean;
  domain_id: string;
}

/** One currency as the domain sees it: the override's rate while it is ENABLED, else the default's. */
export function toExchangeRateInfo(domainId: string, currency: string, defaultRate: number, o: ExchangeRateOverride | undefined): EffectiveRate {
  if (!o) return { currency, rate: defaultRate, state: 'ENABLED', is_default: true, domain_id: domainId };
  const enabled = o.state === 'ENABLED';
  return { currency, rate: enabled ? o.rate : defaultRate, state: enabled ? 'ENABLED' : 'DISABLED', is_default: !enabled, domain_id: domainId };
}
