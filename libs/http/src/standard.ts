import type { z } from 'zod';
import type { Access, AuthContext } from '@platform/auth';
import { StatisticsQuerySchema, type StatisticsQuery } from '@platform/query';
import { operation, type ErrorCodes } from './operation';
import { request } from './schemas';
import { NOT_FOUND, QUERY_ERRORS, StatResult } from './responses';

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

/**
 * An operation on one resource named by its id (`get`, `enable`, `disable`, `delete`), the same shape
 * everywhere: `{<key>: <id>}` (and the optional `domain_id` of every request), answered by `call` with
 * the caller and the id; its errors are NOT_FOUND unless `errors` says otherwise.
 *
 *   idOperation({ path: '/identity/v2/project-group/get', access: read, id: { project_group_id: id },
 *     response: ProjectGroupInfo, call: (auth, groupId) => service.get(auth, groupId) })
 */
export function idOperation<K extends string>(def: {
  path: string;
  access: Access;
  /** The one field that names the resource, and its schema (with its `.describe(...)`). */
  id: Record<K, z.ZodType<string>>;
  response: z.ZodType;
  errors?: ErrorCodes;
  summary?: string;
  call: (auth: AuthContext, id: string) => unknown;
}) {
  const keys = Object.keys(def.id) as K[];
  if (keys.length !== 1) throw new Error(`${def.path}: idOperation takes one id field, got ${keys.length}`);
  const key = keys[0];
  return operation({
    path: def.path,
    access: def.access,
    ...(def.summary !== undefined && { summary: def.summary }),
    schema: request(def.id as Record<K, z.ZodType<string>>),
    response: def.response,
    errors: def.errors ?? NOT_FOUND,
    handler: (input, { auth }) => def.call(auth, (input as Record<K, string>)[key]),
  });
}
