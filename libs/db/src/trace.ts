// Spans of SQL statements (libs/telemetry), made by the pool itself: one client span per statement
// run inside a sampled operation, with the statement's text ($n placeholders, never the bound values).
import { bindToCaller, endSpan, startClientSpan, tracingEnabled } from '@platform/telemetry';
import type { Pool, PoolClient } from 'pg';

/** Statement text kept in a span, at most (a bulk INSERT's placeholders run long). */
const MAX_TEXT = 2000;
const VERB = /^\s*([A-Za-z]{1,16})/;

type QueryFn = (...args: unknown[]) => unknown;

/** A statement's span: `<VERB> <database>`, the text with its placeholders, or undefined outside a sampled operation. */
function statementSpan(first: unknown, database: string | undefined) {
  const text = typeof first === 'string' ? first : (first as { text?: unknown } | undefined)?.text;
  if (typeof text !== 'string') return undefined;
  const verb = (VERB.exec(text)?.[1] ?? 'SQL').toUpperCase();
  return startClientSpan(database ? `${verb} ${database}` : verb, {
    'db.system.name': 'postgresql',
    'db.query.text': text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text,
    ...(database && { 'db.namespace': database }),
  });
}

/** Wraps a client's `query`: a span per statement while a sampled span is active (promise and callback forms). */
function traceClient(client: PoolClient) {
  const query = client.query as unknown as QueryFn;
  const database = (client as unknown as { database?: string }).database;
  (client as unknown as { query: QueryFn }).query = function tracedQuery(this: unknown, ...args: unknown[]) {
    const first = args[0];
    // A submittable (a cursor, a COPY stream) has no single end to wait for: not traced.
    if (first && typeof (first as { submit?: unknown }).submit === 'function') return query.apply(this, args);
    const span = statementSpan(first, database);
    if (!span) return query.apply(this, args);
    const last = args.length - 1;
    const cb = args[last];
    if (typeof cb === 'function') {
      args[last] = (err: unknown, res: unknown) => {
        endSpan(span, err);
        return (cb as (e: unknown, r: unknown) => unknown)(err, res);
      };
      return query.apply(this, args);
    }
    let out: unknown;
    try {
      out = query.apply(this, args);
    } catch (e) {
      endSpan(span, e);
      throw e;
    }
    if (out && typeof (out as Promise<unknown>).then === 'function') {
      (out as Promise<unknown>).then(
        () => endSpan(span),
        (e) => endSpan(span, e),
      );
    } else endSpan(span);
    return out;
  };
}

/**
 * While tracing is on: every connection of `pool` makes a span per statement run inside a sampled
 * operation (Prisma's queries included: they go through the same pool), and a connection handed to a
 * waiting caller keeps that caller's context, none included (pg-pool calls it back from another
 * request's release).
 */
export function traceStatements(pool: Pool) {
  if (!tracingEnabled()) return;
  pool.on('connect', (client) => traceClient(client));
  const connect = pool.connect.bind(pool) as (cb?: (...args: never[]) => unknown) => unknown;
  (pool as unknown as { connect: typeof connect }).connect = (cb) => (cb ? connect(bindToCaller(cb)) : connect());
}
