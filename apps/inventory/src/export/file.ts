import type { PoolClient } from 'pg';
import { csvLine } from '@platform/core';
import { compileListRows, runAnalyze, splitKey } from '@platform/query';
import { dbTimeouts } from '@platform/db';
import type { InventoryDeps } from '../deps';
import { cloudServiceExportResource as resource } from '../cloud-service/fields';
import { bindForCopy, copyCsvLines } from './copy-out';
import { copyable, csvCopySelect, rawSelect, nodeScan, type ExportCell } from './csv-sql';
import { csvCell, sheetNamer, type Cell, type CellOptions } from './format';
import type { Planned, StoredExport } from './types';
import type { TableWriter } from './writers';

/**
 * The file of an export, produced while it is downloaded: every option of the stored plan, in one
 * read-only snapshot, into a CSV / ZIP / XLSX writer (docs/decisions/inventory.md, "export").
 */

function setIn(obj: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const base = obj && typeof obj === 'object' && !Array.isArray(obj) ? { ...(obj as Record<string, unknown>) } : {};
  base[path[0]] = setIn(base[path[0]], path.slice(1), value);
  return base;
}

function dig(v: unknown, path: string[]): unknown {
  for (const seg of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[seg];
  }
  return v;
}

/**
 * Runs a SEARCH option's `fn` with the session's time zone set to `timezone` (timestamps then format in
 * it, a cheaper way than converting each) and sorts disabled, and back to what they were after (analyze
 * sheets group dates as before). Without sorts the planner streams the rows in the order of an index
 * when one serves the order, as for a literal: the scope's values reach COPY as settings (copy-out.ts),
 * which the planner cannot estimate, and it preferred reading the whole table and sorting it (on the
 * benchmark's 1M rows, a sort of every row in the export's memory, on disk). An order no index serves
 * is still sorted.
 */
async function searchSettings<T>(client: PoolClient, timezone: string, fn: () => Promise<T>): Promise<T> {
  const { rows } = await client.query(
    `SELECT current_setting('TimeZone') AS tz, current_setting('enable_sort') AS sort, set_config('TimeZone', $1, true), set_config('enable_sort', 'off', true)`,
    [timezone],
  );
  try {
    return await fn();
  } finally {
    // After a failure the connection may be gone (and is discarded): nothing to restore.
    await client.query(`SELECT set_config('TimeZone', $1, true), set_config('enable_sort', $2, true)`, [rows[0].tz, rows[0].sort]).catch(() => {});
  }
}

export class ExportFile {
  constructor(private readonly deps: Pick<InventoryDeps, 'config' | 'directory'>) {}

  /** Every option of the export into `writer`, in one read-only snapshot. */
  async write(client: PoolClient, spec: StoredExport, domainId: string, writer: TableWriter): Promise<void> {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // Floats as the shortest text that reads back exactly (PostgreSQL's default, which export/csv-sql.ts
    // relies on). No JIT: compiling the large cell expressions costs more than it saves. No parallel
    // workers: an export streams in order (an index scan rather than a parallel sort of every row) and
    // leaves the other cores to the service.
    // An export reads every row in scope: it runs under the export statement timeout, not the API's.
    await client.query(
      `SET LOCAL extra_float_digits = 1; SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL statement_timeout = ${Number(dbTimeouts().export)}`,
    );
    const sheetName = sheetNamer();
    for (const [i, p] of spec.options.entries()) {
      const name = sheetName(p.name);
      if (p.type === 'SEARCH') await searchSettings(client, spec.timezone, () => this.writeSearch(client, p, i, name, domainId, writer));
      else await this.writeAnalyze(client, p, i, name, writer);
    }
    await client.query('COMMIT');
    await writer.finish();
  }

  /**
   * A SEARCH option, streamed: the rows of the compiled list query (no count). Only what the fields
   * need is read: a column, a JSON path of one, a timestamp already formatted in the export's time zone
   * by PostgreSQL. For CSV, PostgreSQL also writes the lines (`COPY ... TO STDOUT`, see
   * export/csv-sql.ts); otherwise (Excel, project names, unwound fields, sizes) a cursor reads the raw
   * values in batches (the next batch is fetched while this one is written) and Node formats them.
   */
  private async writeSearch(client: PoolClient, p: Extract<Planned, { type: 'SEARCH' }>, i: number, sheet: string, domainId: string, writer: TableWriter) {
    const c = compileListRows(resource, p.query, p.scope, { prefix: `options[${i}].search_query` });
    const values = [...c.values];
    const param = (v: unknown, cast: string) => {
      values.push(v);
      return `$${values.length}::${cast}`;
    };
    const projectNames = new Map<string, string>();
    const fields = p.fields.map((f) => {
      const s = splitKey(resource.fields, f.key)!;
      const column = resource.spec.fields[s.name].column;
      const col = `x."${column.replace(/"/g, '""')}"`;
      // An unwound column is read whole and patched with its element, as list answers it.
      const unwound = c.unwind?.column === column;
      const projectRef = f.reference?.resource_type === 'identity.Project';
      const opts = { ...f.options, type: f.type } as CellOptions;
      const cell: ExportCell = unwound
        ? { kind: s.field.type, sql: col, opts, nodeOnly: true }
        : s.field.type === 'datetime'
          ? { kind: 'datetime', sql: `to_char(${col}, 'YYYY-MM-DD HH24:MI:SS')`, opts } // in the session's time zone, the export's (see searchSettings)
          : s.path.length > 0
            ? { kind: 'json', sql: col, path: s.path, opts }
            : { kind: s.field.type, sql: col, opts };
      if (projectRef) cell.nodeOnly = true;
      return { cell, unwound, path: unwound ? s.path : [], projectRef, opts };
    });
    const cells = fields.map((f) => f.cell);
    /** The cells of a row from its raw values, as Node formats them. */
    const format = async (raw: unknown[], unwoundElement?: unknown) => {
      const out: Cell[] = new Array(fields.length);
      for (let k = 0; k < fields.length; k++) {
        const f = fields[k];
        let v = raw[k];
        if (f.unwound) v = dig(setIn(v, c.unwind!.path, [unwoundElement]), f.path);
        if (f.projectRef) v = await this.projectName(domainId, v, projectNames);
        out[k] = csvCell(v, f.opts);
      }
      return out;
    };
    const header = p.fields.map((f) => f.name || f.key);
    if (writer.lines && copyable(cells)) {
      const sql = await bindForCopy(client, csvCopySelect(c.text, cells, param), values);
      await writer.begin(sheet, p.title, header);
      await copyCsvLines(client, sql, writer.lines.bind(writer), (raw) => csvLine(fields.map((f, k) => csvCell(raw[k], f.opts))), nodeScan(cells));
      await writer.end();
      return;
    }
    const cursor = `export_${i}`;
    const extra = c.unwind ? [{ sql: 'x.__qunwind', name: 'ru' }] : [];
    await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${rawSelect(c.text, cells, extra, param)}`, values);
    await writer.begin(sheet, p.title, header);
    const fetch = { text: `FETCH ${this.deps.config.export.batchSize} FROM ${cursor}`, rowMode: 'array' as const };
    let pending: Promise<{ rows: unknown[][] }> | undefined = client.query(fetch);
    try {
      for (;;) {
        const { rows } = await pending!;
        pending = undefined;
        if (rows.length === 0) break;
        pending = client.query(fetch);
        const out: Cell[][] = new Array(rows.length);
        for (let r = 0; r < rows.length; r++) out[r] = await format(rows[r], rows[r][fields.length]);
        await writer.rows(out);
      }
    } finally {
      // A batch still in flight when writing failed must not turn into an unhandled rejection.
      await pending?.catch(() => {});
    }
    await client.query(`CLOSE ${cursor}`);
    await writer.end();
  }

  /** identity.Project references show the project's name (from the directory), as upstream's reference manager does. */
  private async projectName(domainId: string, v: unknown, cache: Map<string, string>): Promise<unknown> {
    if (Array.isArray(v)) return Promise.all(v.map((x) => this.projectName(domainId, x, cache)));
    if (typeof v !== 'string' || !v) return v;
    let name = cache.get(v);
    if (name === undefined) {
      name = (await this.deps.directory.getProject(domainId, v))?.name ?? v;
      cache.set(v, name);
    }
    return name;
  }

  private async writeAnalyze(client: PoolClient, p: Extract<Planned, { type: 'ANALYZE' }>, i: number, sheet: string, writer: TableWriter) {
    const { results } = await runAnalyze(client, resource, p.query, p.scope, { prefix: `options[${i}].analyze_query` });
    const header = [...p.columns];
    const seen = new Set(header);
    for (const r of results) {
      for (const k of Object.keys(r)) {
        if (!seen.has(k)) {
          seen.add(k);
          header.push(k);
        }
      }
    }
    await writer.begin(sheet, p.title, header);
    await writer.rows(results.map((r) => header.map((k) => csvCell(r[k], undefined))));
    await writer.end();
  }
}
