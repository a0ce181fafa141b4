import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { PoolClient } from 'pg';
import type { AuthContext } from '@platform/auth';
import { bearerToken } from '@platform/auth';
import { csvLine, generateSecret, type Logger } from '@platform/core';
import { ApiError, errors } from '@platform/errors';
import { compileListRows, runAnalyze, runListRows, splitKey, type AnalyzeQuery, type Condition, type Query, type SortItem, type Unwind } from '@platform/query';
import { dbTimeouts } from '@platform/db';
import { enforceMinRate } from '@platform/http';
import { ProjectScope } from '@platform/directory';
import type { InventoryDeps } from '../deps';
import { csvCell, isTimeZone, sheetNamer, type Cell, type CellOptions } from '../export/format';
import { bindForCopy, copyCsvLines } from '../export/copy-out';
import { copyable, csvCopySelect, rawSelect, type ExportCell } from '../export/csv-sql';
import { DownloadSlots } from '../export/slots';
import { CsvWriter, CsvZipWriter, XlsxWriter, type TableWriter } from '../export/writers';
import { cloudServiceExportResource as resource } from './repository';
import type { QueryScoper } from './scope';

export const DOWNLOAD_PATH = '/inventory/v1/cloud-service/export/download';

export interface ExportField {
  key: string;
  name?: string;
  type?: string;
  options?: Omit<CellOptions, 'type'>;
  reference?: { resource_type?: string; reference_key?: string };
}

type Filters = Pick<Query, 'filter' | 'filter_or' | 'keyword' | 'page'> & { sort?: SortItem[] | null };

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
type Planned =
  | { type: 'SEARCH'; name: string; title?: string; query: Query; scope: Condition[]; fields: ExportField[] }
  | { type: 'ANALYZE'; name: string; title?: string; query: AnalyzeQuery; scope: Condition[]; columns: string[] };

interface StoredExport {
  options: Planned[];
  /** Requested with a WORKSPACE_MEMBER token: the download narrows to the member's projects of then. */
  member?: boolean;
  file_format: 'EXCEL' | 'CSV';
  file_name: string;
  timezone: string;
  requested_at: string;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const noData = () => new ApiError(400, 'ERROR_NO_DATA_TO_EXPORT', 'No data to export.');

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
 * Runs `fn` with the session's time zone set to `timezone` (timestamps then format in it, a cheaper way
 * than converting each), and back to what it was after (analyze sheets group dates as before).
 */
async function withTimeZone<T>(client: PoolClient, timezone: string, fn: () => Promise<T>): Promise<T> {
  const { rows } = await client.query(`SELECT current_setting('TimeZone') AS tz, set_config('TimeZone', $1, true)`, [timezone]);
  try {
    return await fn();
  } finally {
    // After a failure the connection may be gone (and is discarded): nothing to restore.
    await client.query(`SELECT set_config('TimeZone', $1, true)`, [rows[0].tz]).catch(() => {});
  }
}

/** `attachment; filename=...` with an ASCII fallback and the UTF-8 name (RFC 6266 / 5987). */
function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\/]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/**
 * export (upstream cloud_service_service.export + export_manager): the request is validated and
 * checked for data at once, and answered with a download URL; the file itself is produced while it
 * is downloaded, streaming rows from a database cursor into a CSV / ZIP / XLSX writer.
 */
export class CloudServiceExporter {
  private readonly slots: DownloadSlots;

  constructor(
    private readonly deps: InventoryDeps,
    private readonly scoper: QueryScoper,
  ) {
    const e = deps.config.export;
    this.slots = new DownloadSlots({ max: e.maxDownloads, maxPerDomain: e.maxDownloadsPerDomain, maxPerUser: e.maxDownloadsPerUser });
  }

  private fieldsOf(o: ExportOption, i: number): ExportField[] {
    const fields = o.search_query?.fields;
    if (!fields || fields.length === 0) throw errors.requiredParameter(`options[${i}].search_query.fields`);
    return fields.map((f, j) => {
      const field = typeof f === 'string' ? { key: f } : f;
      const s = splitKey(resource.fields, field.key);
      if (!s || (s.path.length > 0 && s.field.type !== 'json')) {
        throw errors.invalidParameter(`options[${i}].search_query.fields[${j}]`, `unknown key "${field.key}"`);
      }
      return field;
    });
  }

  private async plan(auth: AuthContext, o: ExportOption, i: number): Promise<Planned> {
    if (o.query_type === 'SEARCH') {
      if (!o.search_query) throw errors.requiredParameter(`options[${i}].search_query`);
      const fields = this.fieldsOf(o, i);
      const { fields: _f, ...q } = o.search_query;
      const prefix = `options[${i}].search_query`;
      const { query, scope } = await this.scoper.apply(auth, q as Query, [], prefix);
      return { type: 'SEARCH', name: o.name, title: o.title, query, scope, fields };
    }
    if (!o.analyze_query) throw errors.requiredParameter(`options[${i}].analyze_query`);
    const { query, scope } = await this.scoper.apply(auth, o.analyze_query as AnalyzeQuery, [], `options[${i}].analyze_query`);
    // Columns in the query's order (group keys, fields, selected values), kept apart: the stored
    // request is jsonb, which does not keep the order of object keys.
    const columns = [
      ...(query.group_by ?? []).map((g) => (typeof g === 'string' ? g.split('.').pop()! : g.name)),
      ...Object.keys(query.fields ?? {}),
      ...Object.keys(query.select ?? {}),
    ];
    return { type: 'ANALYZE', name: o.name, title: o.title, query, scope, columns };
  }

  /** Whether the option yields rows (this also compiles its query, so a bad one is refused now). */
  private async hasRows(p: Planned, i: number): Promise<boolean> {
    if (p.type === 'ANALYZE') {
      const r = await runAnalyze(this.deps.pool, resource, p.query, p.scope, { prefix: `options[${i}].analyze_query` });
      return r.results.length > 0;
    }
    // The first row of the page is enough (a start applies with a limit, as list's paging).
    const limit = p.query.page?.limit && p.query.page.limit > 0 ? p.query.page.limit : null;
    const start = limit === null ? 1 : Math.max(1, p.query.page?.start ?? 1);
    const probe = { ...p.query, sort: undefined, page: { start, limit: 1 } };
    const rows = await runListRows(this.deps.pool, resource, probe, p.scope, { prefix: `options[${i}].search_query` });
    return rows.length > 0;
  }

  async request(auth: AuthContext, input: ExportRequest): Promise<{ download_url: string }> {
    // Each export is a stored plan until its URL expires, and its request probes every option: a
    // requester has a bounded number pending (issue #23), refused before any of that work.
    const { prisma, config } = this.deps;
    const pending = await prisma.cloudServiceExport.count({
      where: { domain_id: auth.domainId, user_id: auth.userId, expires_at: { gt: new Date() } },
    });
    if (pending >= config.export.maxPendingPerUser) {
      throw new ApiError(429, 'ERROR_TOO_MANY_EXPORTS', `Too many exports at once: ${config.export.maxPendingPerUser} of yours are pending; retry when one has expired.`, {
        retryAfterSeconds: 60,
      });
    }
    const timezone = input.timezone ?? 'UTC';
    // The name must be an IANA zone that both Node and PostgreSQL (which formats the timestamps) know.
    const known = isTimeZone(timezone) && (await this.deps.pool.query('SELECT now() AT TIME ZONE $1', [timezone]).then(() => true, () => false));
    if (!known) throw errors.invalidParameter('timezone', 'Timezone is invalid.');
    const planned: Planned[] = [];
    for (const [i, o] of input.options.entries()) {
      const p = await this.plan(auth, o, i);
      if (await this.hasRows(p, i)) planned.push(p);
    }
    if (planned.length === 0) throw noData();
    const stored: StoredExport = {
      options: planned,
      file_format: input.file_format ?? 'EXCEL',
      file_name: input.file_name ?? 'cloud_service_export',
      timezone,
      requested_at: new Date().toISOString(),
      ...((await this.scoper.projects(auth)).restricted && { member: true }),
    };
    const token = generateSecret(32);
    await prisma.cloudServiceExport.deleteMany({ where: { expires_at: { lt: new Date() } } });
    await prisma.cloudServiceExport.create({
      data: {
        token_hash: hashOf(token),
        domain_id: auth.domainId,
        workspace_id: auth.workspaceId,
        user_id: auth.userId,
        role_id: auth.roleId,
        request: stored as object,
        expires_at: new Date(Date.now() + config.export.urlTtlSeconds * 1000),
      },
    });
    return { download_url: `${config.publicBaseUrl}${DOWNLOAD_PATH}/${token}` };
  }

  /**
   * GET of a download URL. The URL is the credential (as upstream's pre-signed URL): it works until it
   * expires. A request that also carries a token must carry one of the same domain.
   */
  async download(token: string, authorization: string | undefined, res: Response, logger: Logger): Promise<void> {
    const record = await this.deps.prisma.cloudServiceExport.findUnique({ where: { token_hash: hashOf(token) } });
    if (!record || record.expires_at.getTime() <= Date.now()) throw errors.notFound('download_url', 'expired or unknown');
    // The URL carries the requester's grant of then: once identity revokes it (a role changed, the user
    // disabled or deleted, the workspace disabled, the custom role disabled: issues #23, #29), the URL stops too.
    if (this.deps.verifier.revoked({ domainId: record.domain_id, userId: record.user_id, workspaceId: record.workspace_id, roleId: record.role_id, issuedAtMs: record.created_at.getTime() })) {
      throw errors.notFound('download_url', 'expired or unknown');
    }
    if (authorization !== undefined) {
      const auth = await this.deps.verifier.authenticate(bearerToken(authorization));
      if (auth.domainId !== record.domain_id) throw errors.notFound('download_url', 'expired or unknown');
    }
    // A download holds a database connection while it streams: a bounded number at once (export/slots.ts).
    const release = this.slots.take(record.domain_id, record.user_id);
    // A client slower than the minimum rate loses the connection: the writes fail and the slot is given back.
    const unwatch = enforceMinRate(res, this.deps.config.export.minRate, (taken, ms) =>
      logger.warn({ taken, ms, domain_id: record.domain_id }, 'export download cut: the client reads slower than the minimum rate'),
    );
    try {
      await this.stream(record, res, logger);
    } finally {
      unwatch();
      release();
    }
  }

  private async stream(record: { domain_id: string; workspace_id: string; user_id: string; request: unknown; created_at: Date }, res: Response, logger: Logger): Promise<void> {
    const spec = record.request as unknown as StoredExport;
    if (spec.member) {
      // The scope was resolved at request time; a member's projects may have shrunk since: the file
      // holds only what they may still see (ANDed, so it never grows past what was requested).
      const now = new ProjectScope(await this.deps.directory.memberProjects(record.domain_id, record.workspace_id, record.user_id));
      spec.options = spec.options.map((o) => ({ ...o, scope: [...o.scope, ...now.conditions()] }));
    }
    const writer: TableWriter =
      spec.file_format === 'EXCEL' ? XlsxWriter.create(res) : spec.options.length > 1 ? new CsvZipWriter(res) : new CsvWriter(res);
    const date = spec.requested_at.slice(0, 10).replace(/-/g, '');
    res.status(200);
    res.setHeader('Content-Type', writer.contentType);
    res.setHeader('Content-Disposition', contentDisposition(`${spec.file_name}_${date}.${writer.extension}`));
    res.setHeader('Cache-Control', 'no-store');

    // The read replica when there is one fresh enough for the requester (docs/decisions/database.md).
    const client = await this.deps.reads.connect({ domainId: record.domain_id, userId: record.user_id });
    // The client may leave before the file is done (gone, or cut for reading too slowly): a writer may
    // then never settle (exceljs waits for a stream nobody reads), so the download stops waiting for the
    // file when the answer closes, and the connection is discarded (issue #32).
    const closed = new Promise<never>((_, reject) => res.once('close', () => reject(new Error('output closed'))));
    closed.catch(() => {});
    let failed: unknown;
    try {
      const file = this.writeFile(client, spec, record.domain_id, writer);
      file.catch(() => {}); // settles after the race when the answer closed first
      await Promise.race([file, closed]);
      if (!res.writableEnded) res.end();
    } catch (e) {
      failed = e;
      if (!res.destroyed) await client.query('ROLLBACK').catch(() => {});
    } finally {
      client.release(failed !== undefined && (!(failed instanceof ApiError) || res.destroyed));
    }
    if (failed !== undefined) {
      // Headers and part of the file are out: the only honest signal left is to cut the connection.
      if (res.headersSent) {
        logger.warn({ err: (failed as Error).message }, 'export download aborted');
        res.destroy();
        return;
      }
      throw failed;
    }
  }

  /** Every option of the export into `writer`, in one read-only snapshot. */
  private async writeFile(client: PoolClient, spec: StoredExport, domainId: string, writer: TableWriter): Promise<void> {
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
      if (p.type === 'SEARCH') await withTimeZone(client, spec.timezone, () => this.writeSearch(client, p, i, name, domainId, writer));
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
          ? { kind: 'datetime', sql: `to_char(${col}, 'YYYY-MM-DD HH24:MI:SS')`, opts } // in the session's time zone, the export's (see withTimeZone)
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
      await copyCsvLines(client, sql, writer.lines.bind(writer), (raw) => csvLine(fields.map((f, k) => csvCell(raw[k], f.opts))));
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
