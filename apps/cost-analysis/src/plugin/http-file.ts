import { setOwn } from '@platform/core';
import { isApiError } from '@platform/errors';
import { OutboundRefused, urlForDisplay, type OutboundPolicy } from '@platform/net';
import { isIsoCurrency } from '../currency';
import { readCsv } from './csv-reader';
import { guardBody } from './fetch-guard';
import { loadLimits, type CollectionLimits } from '../config';
import { BASE_URL_KEY, checkUrl, fetchStream } from './safe-url';
import { PluginError, type CostDataSourcePlugin, type CostRecord, type DataPage, type RowError } from './types';

/**
 * Built-in equivalent of upstream's plugin-http-file-cost-datasource: cost data from CSV files over
 * http(s). Options: `base_url` (a URL or a list of URLs; one task per URL), optional `field_mapper`
 * ({our_field: "their column"}) and `default_vars` ({field: value} set on every row). Columns: `cost`,
 * `currency` and either `year`, `month`, `day` or `billed_date` are required; `usage_quantity`,
 * `provider`, `region_code`, `product`, `account`, `usage_type`, `usage_unit`, `project_id`,
 * `service_account_id`, `tags` (a JSON object) or `tags.<key>`, and `additional_info.<key>` are optional.
 * The file is streamed; rows that are not cost data are reported with their line numbers and the
 * field at fault, never with the value (a tenant may point base_url at a service that is not theirs:
 * no byte it answers may come back in a task's error_message).
 */
export const HTTP_FILE_PLUGIN_ID = 'plugin-http-file-cost-datasource';
const MAX_URLS = 100;
const TEXT_FIELDS = ['usage_type', 'usage_unit', 'provider', 'region_code', 'product', 'account', 'project_id', 'service_account_id'] as const;

function urls(options: Record<string, unknown>): string[] {
  const v = options.base_url;
  const list = Array.isArray(v) ? v : [v];
  if (!list.length || list.some((u) => typeof u !== 'string' || !u)) {
    throw new PluginError('ERROR_INVALID_PARAMETER', 'options.base_url must be a URL or a list of URLs.');
  }
  // One task per URL: the tasks of one collection are bounded too (issue #32).
  if (list.length > MAX_URLS) throw new PluginError('ERROR_INVALID_PARAMETER', `options.base_url lists more than ${MAX_URLS} URLs.`);
  return list as string[];
}

function stringMap(v: unknown, key: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    throw new PluginError('ERROR_INVALID_PARAMETER', `options.${key} must be an object of strings.`);
  }
  return v as Record<string, string>;
}

/** `YYYY-MM-DD` from year/month/day (one-digit month and day allowed, as upstream pads them), or null. */
/** Dates already checked, by their year, month and day as written (a bill has few distinct days). */
const checkedDates = new Map<string, string | null>();
const MAX_CHECKED_DATES = 4096;

function isoDate(year: string, month: string, day: string): string | null {
  if (year.length + month.length + day.length > 8) return checkDate(year, month, day); // not a date: never cached
  const key = `${year}/${month}/${day}`;
  let iso = checkedDates.get(key);
  if (iso === undefined) {
    if (checkedDates.size >= MAX_CHECKED_DATES) checkedDates.clear();
    checkedDates.set(key, (iso = checkDate(year, month, day)));
  }
  return iso;
}

function checkDate(year: string, month: string, day: string): string | null {
  if (!/^\d{4}$/.test(year) || !/^\d{1,2}$/.test(month) || !/^\d{1,2}$/.test(day)) return null;
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  const dt = new Date(Date.UTC(y, m - 1, d));
  if (dt.getUTCFullYear() !== y || dt.getUTCMonth() !== m - 1 || dt.getUTCDate() !== d) return null;
  return `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
}

function parseBilledDate(v: string): string | null {
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$/.exec(v);
  return m ? isoDate(m[1], m[2], m[3]) : null;
}

/** A text field of a row: its default value, else its column trimmed, else ''. */
const textAt = (r: string[], f: { i: number; dv: string | undefined }): string => f.dv ?? (f.i >= 0 ? r[f.i].trim() : '');

type TagLimits = Pick<CollectionLimits, 'maxTagsPerRow' | 'maxTagKeyChars' | 'maxTagValueChars'>;

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Turns the file's rows into cost records: columns located once from the header, each row checked. */
class Reader {
  private readonly cols: string[];
  private readonly at: (name: string) => number;
  /** Per TEXT_FIELDS entry: its default value, else its column (-1: none, so ''). */
  private readonly text: { i: number; dv: string | undefined }[];
  private readonly extra: { i: number; kind: 'tags' | 'tag' | 'info'; key: string }[] = [];
  private readonly cost: number;
  private readonly currency: number;
  private readonly qty: number;
  private readonly date: (r: string[]) => string | null;

  constructor(
    header: string[],
    fieldMapper: Record<string, string>,
    private readonly defaults: Record<string, string>,
    private readonly limits: TagLimits,
  ) {
    const renamed = new Map(Object.entries(fieldMapper).map(([ours, theirs]) => [theirs.trim(), ours]));
    this.cols = header.map((h) => renamed.get(h.trim()) ?? h.trim());
    const index = new Map<string, number>();
    this.cols.forEach((c, i) => index.set(c, i));
    this.at = (name) => index.get(name) ?? -1;
    const has = (c: string) => index.has(c) || c in defaults;
    const missing = ['cost', 'currency'].filter((c) => !has(c));
    if (!has('billed_date')) missing.push(...['year', 'month', 'day'].filter((c) => !has(c)));
    if (missing.length) throw new PluginError('ERROR_INVALID_COLUMN', `Required column(s) missing from the CSV header: ${missing.join(', ')}.`);
    this.cost = this.at('cost');
    this.currency = this.at('currency');
    this.qty = this.at('usage_quantity');
    this.text = TEXT_FIELDS.map((f) => ({ i: this.at(f), dv: defaults[f] }));
    this.cols.forEach((c, i) => {
      if (c === 'tags') this.extra.push({ i, kind: 'tags', key: '' });
      else if (c.startsWith('tags.')) this.extra.push({ i, kind: 'tag', key: c.slice(5) });
      else if (c.startsWith('additional_info.')) this.extra.push({ i, kind: 'info', key: c.slice(16) });
    });
    const tagColumns = this.extra.filter((e) => e.kind === 'tag');
    if (tagColumns.length > limits.maxTagsPerRow) {
      throw new PluginError('ERROR_COLLECT_LIMIT', `The CSV header has ${tagColumns.length} tag columns, more than ${limits.maxTagsPerRow} (COLLECT_MAX_TAGS_PER_ROW).`);
    }
    if (tagColumns.some((e) => e.key.length > limits.maxTagKeyChars)) {
      throw new PluginError('ERROR_COLLECT_LIMIT', `A tag column's key is longer than ${limits.maxTagKeyChars} characters (COLLECT_MAX_TAG_KEY_CHARS).`);
    }
    const v = (r: string[], name: string) => defaults[name] ?? (r[this.at(name)] ?? '').trim();
    this.date = has('billed_date') ? (r) => parseBilledDate(v(r, 'billed_date')) : (r) => isoDate(v(r, 'year'), v(r, 'month'), v(r, 'day'));
  }

  /** What is wrong with a row's tags (too many, a key or value too long), if anything. */
  private checkTags(tags: Record<string, unknown>): string | undefined {
    const { maxTagsPerRow, maxTagKeyChars, maxTagValueChars } = this.limits;
    const keys = Object.keys(tags);
    if (keys.length > maxTagsPerRow) return `more than ${maxTagsPerRow} tags (COLLECT_MAX_TAGS_PER_ROW)`;
    for (const k of keys) {
      if (k.length > maxTagKeyChars) return `a tag key is longer than ${maxTagKeyChars} characters (COLLECT_MAX_TAG_KEY_CHARS)`;
      const value = tags[k];
      const size = typeof value === 'string' ? value.length : JSON.stringify(value ?? null).length;
      if (size > maxTagValueChars) return `a tag value is longer than ${maxTagValueChars} characters (COLLECT_MAX_TAG_VALUE_CHARS)`;
    }
    return undefined;
  }

  read(r: string[], line: number, page: DataPage) {
    const err = (message: string) => page.errors.push({ line, message } satisfies RowError);
    if (r.length !== this.cols.length) return err(`expected ${this.cols.length} columns, found ${r.length}`);
    const d = this.defaults;
    const costText = d.cost ?? r[this.cost].trim();
    const currency = d.currency ?? r[this.currency].trim();
    const qtyText = d.usage_quantity ?? (this.qty >= 0 ? r[this.qty].trim() : '');
    if (!NUMBER.test(costText)) return err('cost is not a number');
    if (qtyText !== '' && !NUMBER.test(qtyText)) return err('usage_quantity is not a number');
    if (!isIsoCurrency(currency)) return err('currency is not an ISO 4217 code');
    const billed = this.date(r);
    if (!billed) return err('billed date (year, month, day or billed_date) is not a valid date');
    // One object literal with every field (one hidden class), not fields stored by name afterwards.
    const tx = this.text;
    const rec: CostRecord = {
      cost: Number(costText),
      currency,
      usage_quantity: qtyText === '' ? 0 : Number(qtyText),
      usage_type: textAt(r, tx[0]),
      usage_unit: textAt(r, tx[1]),
      provider: textAt(r, tx[2]),
      region_code: textAt(r, tx[3]),
      product: textAt(r, tx[4]),
      account: textAt(r, tx[5]),
      project_id: textAt(r, tx[6]),
      service_account_id: textAt(r, tx[7]),
      billed_date: billed,
      line,
      tags: {},
      additional_info: {},
    };
    for (const { i, kind, key } of this.extra) {
      const value = r[i].trim();
      if (value === '') continue;
      // Tag and info keys are data (a CSV column's name): own properties, whatever they are called.
      if (kind === 'tag') setOwn(rec.tags, key, value);
      else if (kind === 'info') setOwn(rec.additional_info, key, value);
      else {
        let t: unknown;
        try {
          t = JSON.parse(value);
        } catch {
          t = undefined;
        }
        if (!t || typeof t !== 'object' || Array.isArray(t)) return err('tags is not a JSON object');
        for (const [k, v] of Object.entries(t)) setOwn(rec.tags, k, v);
      }
    }
    const tagError = this.checkTags(rec.tags);
    if (tagError) return err(tagError);
    page.results.push(rec);
  }
}

export function httpFilePlugin(o: { outbound: OutboundPolicy; limits?: CollectionLimits }): CostDataSourcePlugin {
  const limits = o.limits ?? loadLimits();
  const csvLimits = { maxFieldChars: limits.csvMaxFieldChars, maxRecordChars: limits.csvMaxRecordChars, maxColumns: limits.csvMaxColumns };
  const bodyLimits = { timeoutMs: limits.fetchTimeoutMs, minBytesPerSecond: limits.fetchMinBytesPerSecond, rateWindowMs: limits.fetchRateWindowMs, maxBytes: limits.maxBytes };
  return {
    plugin_id: HTTP_FILE_PLUGIN_ID,
    name: 'HTTP file Cost Analysis Data Source',
    versions: ['1.0.0', '1.1.0'],
    required_keys: ['base_url'],

    init(options) {
      const currency = typeof options.currency === 'string' ? options.currency : 'USD';
      return {
        metadata: {
          currency,
          data_source_rules: [
            {
              name: 'match_service_account',
              conditions: [],
              conditions_policy: 'ALWAYS',
              actions: { match_service_account: { source: 'account', target: 'data.account' } },
              options: { stop_processing: true },
              tags: {},
            },
          ],
        },
      };
    },

    async verify({ options }) {
      for (const u of urls(options)) checkUrl(u, o.outbound);
      stringMap(options.field_mapper, 'field_mapper');
      stringMap(options.default_vars, 'default_vars');
    },

    async getTasks({ options }) {
      // One task per file. Which months a file replaces is known only once it is read, so `changed`
      // is left empty here and the collector records the months each task actually collected.
      return { tasks: urls(options).map((base_url) => ({ task_options: { base_url } })), changed: [] };
    },

    async *getData({ options, task_options, signal }) {
      const url = String(task_options.base_url ?? '');
      const fieldMapper = stringMap(options.field_mapper, 'field_mapper');
      const defaults = stringMap(options.default_vars, 'default_vars');
      const body = await fetchStream(url, { policy: o.outbound, signal });
      let reader: Reader | undefined;
      try {
        for await (const { records, lines } of readCsv(guardBody(body, bodyLimits), csvLimits)) {
          const page: DataPage = { results: [], errors: [] };
          for (let k = 0; k < records.length; k++) {
            if (!reader) {
              reader = new Reader(records[k], fieldMapper, defaults, limits);
              continue;
            }
            reader.read(records[k], lines[k], page);
          }
          if (page.results.length || page.errors.length) yield page;
        }
      } catch (e) {
        // The body's stream failed (reset, cut, cancelled): the uniform refusal, the code in the log only.
        if (e instanceof PluginError || isApiError(e)) throw e;
        throw new OutboundRefused(BASE_URL_KEY, `reading ${urlForDisplay(url)} failed: ${(e as { code?: string }).code ?? (e as Error).message}`);
      } finally {
        body.destroy();
      }
      if (!reader) throw new PluginError('ERROR_INVALID_COLUMN', 'The CSV file is empty: it has no header.');
    },
  };
}
