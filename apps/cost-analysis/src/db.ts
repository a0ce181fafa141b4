import type { QueryResultRow } from 'pg';

/** A pg Pool or a checked-out client: what raw SQL helpers take, so they run inside or outside a transaction. */
export interface Queryable {
  query<R extends QueryResultRow = any>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;  
}
