import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { AuthContext } from '@platform/auth';
import { bearerToken } from '@platform/auth';
import { generateSecret, type Logger } from '@platform/core';
import { ApiError, errors } from '@platform/errors';
import { runAnalyze, runListRows, splitKey, type AnalyzeQuery, type Query } from '@platform/query';
import { enforceMinRate } from '@platform/http';
import { ProjectScope } from '@platform/directory';
import type { InventoryDeps } from '../deps';
import { cloudServiceExportResource as resource } from '../cloud-service/fields';
import type { QueryScoper } from '../cloud-service/scope';
import { ExportFile } from './file';
import { isTimeZone } from './format';
import { DOWNLOAD_PATH } from './route';
import { DownloadSlots } from './slots';
import type { ExportField, ExportOption, ExportRequest, Planned, StoredExport } from './types';
import { CsvWriter, CsvZipWriter, XlsxWriter, type TableWriter } from './writers';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const noData = () => errors.notAllowed('ERROR_NO_DATA_TO_EXPORT', 'No data to export.');

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
  private readonly file: ExportFile;

  constructor(
    private readonly deps: InventoryDeps,
    private readonly scoper: QueryScoper,
  ) {
    const e = deps.config.export;
    this.slots = new DownloadSlots({ max: e.maxDownloads, maxPerDomain: e.maxDownloadsPerDomain, maxPerUser: e.maxDownloadsPerUser });
    this.file = new ExportFile(deps);
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
      throw errors.tooManyRequests('ERROR_TOO_MANY_EXPORTS', `Too many exports at once: ${config.export.maxPendingPerUser} of yours are pending; retry when one has expired.`, 60);
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
      const file = this.file.write(client, spec, record.domain_id, writer);
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

}
