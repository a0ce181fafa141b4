import type { Access, AuthContext } from '@platform/auth';
import { StatisticsQuerySchema, type StatisticsQuery } from '@platform/query';
import { operation } from './operation';
import { request } from './schemas';
import { QUERY_ERRORS, StatResult } from './responses';

/**
 * The `stat` operation every resource has, the same everywhere: `{query: StatisticsQuery}` answered by
 * the resource service's `stat`, scoped to the caller.
 */
export function statOperation(
  path: string,
  access: Access,
  service: { stat(auth: AuthContext, query: StatisticsQuery): Promise<unknown> },
  o: { domainId?: 'required' } = {},
) {
  const schema = o.domainId === 'required' ? request({ query: StatisticsQuerySchema }, { domainId: 'required' }) : request({ query: StatisticsQuerySchema });
  return operation({
    path,
    access,
    schema,
    response: StatResult,
    errors: QUERY_ERRORS,
    handler: (input, { auth }) => service.stat(auth, input.query),
  });
}
