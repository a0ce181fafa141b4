import { z } from 'zod';
import { listOf } from '@platform/http';

/** ExchangeRateInfo: the rate a domain uses for a currency (`is_default`: the default domain's). */
export const ExchangeRateInfo = z
  .strictObject({ currency: z.string(), rate: z.number(), state: z.enum(['ENABLED', 'DISABLED']), is_default: z.boolean(), domain_id: z.string() })
  .meta({ id: 'ExchangeRateInfo' });

export const ExchangeRatesInfo = listOf(ExchangeRateInfo).meta({ id: 'ExchangeRatesInfo' });
