import type { z } from 'zod';
import type { Access, AuthContext } from '@platform/auth';
import { StatisticsQuerySchema, type StatisticsQuery } from '@platform/query';
import { operation, type ErrorCodes } from './operation';
import { request } from './schemas';
import { Empty, NOT_FOUND, QUERY_ERRORS, StatResult } from './responses';

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
 * An operation on one resource named by its id (`get`, `enable`, `disable`, `delete`, and the other
 * verbs that take nothing else: `verify-plugin`, `sync`, `cancel`), the same shape everywhere:
 * `{<key>: <id>}` (and the `domain_id` of every request), answered by `call` with the caller, the id and
 * the whole request; its errors are NOT_FOUND unless `errors` says otherwise.
 *
 * The regular differences are options, each building what the operation written out would:
 * - `fields`: further fields after the id (a get's `only`, a delete's flag); `call` reads them from the
 *   request it is given;
 * - `domainId: 'required'`: the modules whose spec marks `domain_id` R (as `request` and `statOperation`);
 * - `response: Empty` (a delete, a verify): `call`'s result is awaited and the answer is `{}`.
 *
 *   idOperation({ path: '/identity/v2/project-group/get', access: read, id: { project_group_id: id },
 *     response: ProjectGroupInfo, call: (auth, groupId) => service.get(auth, groupId) })
 */
export function idOperation<K extends string, X extends z.ZodRawShape = Record<never, never>, D extends 'required' | 'optional' = 'optional'>(def: {
  path: string;
  access: Access;
  /** The one field that names the resource, and its schema (with its `.describe(...)`). */
  id: Record<K, z.ZodType<string>>;
  /** Further fields of the request, after the id. */
  fields?: X;
  domainId?: D;
  response: z.ZodType;
  errors?: ErrorCodes;
  summary?: string;
  call: (auth: AuthContext, id: string, input: IdRequest<K, X, D>) => unknown;
}) {
  const keys = Object.keys(def.id) as K[];
  if (keys.length !== 1) throw new Error(`${def.path}: idOperation takes one id field, got ${keys.length}`);
  const key = keys[0];
  const shape = { ...def.id, ...def.fields } as Record<K, z.ZodType<string>> & X;
  const schema = def.domainId === 'required' ? request(shape, { domainId: 'required' }) : request(shape);
  const call = def.call;
  return operation({
    path: def.path,
    access: def.access,
    ...(def.summary !== undefined && { summary: def.summary }),
    schema,
    response: def.response,
    errors: def.errors ?? NOT_FOUND,
    handler:
      def.response === Empty
        ? async (input, { auth }) => {
            await call(auth, (input as Record<K, string>)[key], input as IdRequest<K, X, D>);
          }
        : (input, { auth }) => call(auth, (input as Record<K, string>)[key], input as IdRequest<K, X, D>),
  });
}

/** The request an `idOperation`'s `call` is given: the id, the further fields, and `domain_id`. */
export type IdRequest<K extends string, X extends z.ZodRawShape, D extends 'required' | 'optional'> = Record<K, string> &
  z.output<z.ZodObject<X>> & { domain_id: D extends 'required' ? string : string | undefined };
