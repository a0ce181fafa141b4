import { z } from 'zod';
import { WORKSPACE_ROLES } from '@platform/auth';
import { idOperation, operation, request } from '@platform/http';
import type { ExchangeRateService } from './service';
import { ExchangeRateInfo, ExchangeRatesInfo } from './responses';

const CURRENCY_ERRORS = { 400: ['ERROR_UNSUPPORTED_CURRENCY'] };
const STATE_ERRORS = { 400: ['ERROR_UNSUPPORTED_CURRENCY', 'ERROR_CHANGE_STATE'] };

// upstream: exchange rates are domain-scoped; a domain admin changes them, every workspace role reads them.
const write = { permission: 'cost-analysis:ExchangeRate.write', roles: ['DOMAIN_ADMIN'] as const };
const read = { permission: 'cost-analysis:ExchangeRate.read', roles: WORKSPACE_ROLES };
// The contract marks domain_id required here; the router checks it is the caller's.
const domainRequest = <T extends z.ZodRawShape>(shape: T) => request(shape, { domainId: 'required' });
const currency = z.string().trim().min(1).max(16);

export function exchangeRateOperations(service: ExchangeRateService) {
  return [
    operation({
      path: '/cost-analysis/v1/exchange-rate/set',
      access: write,
      schema: domainRequest({ currency, rate: z.number() }),
      response: ExchangeRateInfo,
      errors: CURRENCY_ERRORS,
      handler: (input, { auth }) => service.set(auth, input),
    }),
    operation({
      path: '/cost-analysis/v1/exchange-rate/reset',
      access: write,
      schema: domainRequest({ currency }),
      response: ExchangeRateInfo,
      errors: CURRENCY_ERRORS,
      handler: (input, { auth }) => service.reset(auth, input),
    }),
    idOperation({
      path: '/cost-analysis/v1/exchange-rate/enable',
      access: write,
      id: { currency },
      domainId: 'required',
      response: ExchangeRateInfo,
      errors: STATE_ERRORS,
      call: (auth, _currency, input) => service.enable(auth, input),
    }),
    idOperation({
      path: '/cost-analysis/v1/exchange-rate/disable',
      access: write,
      id: { currency },
      domainId: 'required',
      response: ExchangeRateInfo,
      errors: STATE_ERRORS,
      call: (auth, _currency, input) => service.disable(auth, input),
    }),
    idOperation({
      path: '/cost-analysis/v1/exchange-rate/get',
      access: read,
      id: { currency },
      domainId: 'required',
      response: ExchangeRateInfo,
      errors: CURRENCY_ERRORS,
      call: (auth, _currency, input) => service.get(auth, input),
    }),
    operation({
      path: '/cost-analysis/v1/exchange-rate/list',
      access: read,
      schema: domainRequest({}),
      response: ExchangeRatesInfo,
      handler: (_input, { auth }) => service.list(auth),
    }),
  ];
}
