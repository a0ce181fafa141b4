import type { AnalyzeQuery, Condition, Query, SortItem, Unwind } from '@platform/query';
import type { CellOptions } from './format';

/** The export request (upstream's ExportOption of spaceone.api.core.v2) and the plan stored for its download. */

export interface ExportField {
  key: string;
  name?: string;
  type?: string;
  options?: Omit<CellOptions, 'type'>;
  reference?: { resource_type?: string; reference_key?: string };
}

export type Filters = Pick<Query, 'filter' | 'filter_or' | 'keyword' | 'page'> & { sort?: SortItem[] | null };

export interface ExportOption {
  name: string;
  title?: string;
  query_type: 'SEARCH' | 'ANALYZE';
  search_query?: Filters & { fields?: (string | ExportField)[]; unwind?: Unwind | null };
  analyze_query?: Filters & Pick<AnalyzeQuery, 'group_by' | 'fields' | 'select'>;
}

export interface ExportRequest {
  options: ExportOption[];
  file_format?: 'EXCEL' | 'CSV';
  file_name?: string;
  timezone?: string;
}

/** One option as the download runs it: the query with the caller's scope already resolved. */
export type Planned =
  | { type: 'SEARCH'; name: string; title?: string; query: Query; scope: Condition[]; fields: ExportField[] }
  | { type: 'ANALYZE'; name: string; title?: string; query: AnalyzeQuery; scope: Condition[]; columns: string[] };

export interface StoredExport {
  options: Planned[];
  /** Requested with a WORKSPACE_MEMBER token: the download narrows to the member's projects of then. */
  member?: boolean;
  file_format: 'EXCEL' | 'CSV';
  file_name: string;
  timezone: string;
  requested_at: string;
}
