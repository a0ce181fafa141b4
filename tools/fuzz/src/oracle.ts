import type { Outcome } from './client';
import type { Case } from './gen';
import type { Pools } from './vocab';

/** One thing wrong with an answer (or with the process after it). */
export interface Problem {
  /** `5xx`, `envelope`, `leak`, `outbound-echo`, `authz`, `csv-formula`, `disclosure`, `no-answer`, `crash`, `liveness`, `poisoned`. */
  kind: string;
  detail: string;
  status?: number;
  code?: string;
}

/**
 * What the fuzzer's own outbound target (setup.ts: the CSV server's echo paths) answers: as cost values,
 * in a 404's body, as a Prometheus status. The fuzzer never sends it, so an answer that holds it quotes
 * bytes an outbound fetch read (issue #32): an SSRF read-back channel.
 */
export const OUTBOUND_MARKER = 'FUZZ-OUTBOUND-MARKER-6e1f';

/** Texts that must never reach a caller: stack frames, file paths, SQL, PostgreSQL and Prisma errors. */
const LEAKS: [RegExp, string][] = [
  [/\bat (?:async )?[\w$.<>[\] ]*\(?(?:file:\/\/)?\/?[\w./@-]+\.[cm]?[jt]s:\d+:\d+\)?/, 'a stack frame'],
  [/node_modules/, 'a node_modules path'],
  [/\/work\/|\/dist\/apps\/|\/src\/[\w/-]+\.ts\b/, 'a server file path'],
  [/\b(?:SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\b[\s\S]{0,300}\b(?:FROM|VALUES|SET|WHERE|AS)\b/, 'SQL text'],
  [/syntax error at or near|invalid input syntax for|violates [\w-]+ constraint|relation "[^"]*" does not exist|column "[^"]*" does not exist|operator does not exist:|invalid byte sequence for encoding|unterminated quoted|function [\w.]+\([^)]*\) does not exist|cannot cast type|out of range for type|invalid regular expression: |value too long for type|null value in column|canceling statement due to|stack depth limit exceeded|could not determine data type of parameter/, 'a PostgreSQL error text'],
  [/PrismaClient|Invalid `[\w.]*prisma|prisma\.\w+\.\w+\(|P\d{4}\b.*prisma/i, 'a Prisma error text'],
  [/\b(?:TypeError|RangeError|ReferenceError|SyntaxError|AggregateError): /, 'a JavaScript error text'],
  [/Maximum call stack size exceeded|Cannot read propert(?:y|ies) of|is not a function|is not iterable/, 'a JavaScript error text'],
];

/** The first leak in `text`; `stacksOnly` checks only for stack frames and module paths. */
export function leakIn(text: string, stacksOnly = false): string | undefined {
  for (const [re, what] of stacksOnly ? LEAKS.slice(0, 2) : LEAKS) {
    const m = re.exec(text);
    if (m) return `${what}: ${JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 120))}`;
  }
  return undefined;
}

/** A cell a spreadsheet would take for a number (`-5`, `-1e-7`): a typed number, written as it is. */
const NUMBER_CELL = /^-(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?$/i;

/**
 * The first cell of a CSV (RFC 4180) that a spreadsheet would run as a formula: one that begins with
 * `=`, `+`, `-`, `@`, a tab or a CR without the platform's leading `'` (CSV injection, CWE-1236;
 * docs/decisions/security.md). A negative number is a number.
 */
export function formulaCellIn(csv: string): string | undefined {
  let i = 0;
  while (i < csv.length) {
    let cell = '';
    if (csv[i] === '"') {
      for (i++; i < csv.length; i++) {
        if (csv[i] === '"' && csv[i + 1] === '"') {
          cell += '"';
          i++;
        } else if (csv[i] === '"') {
          break;
        } else {
          cell += csv[i];
        }
      }
      i++;
    } else {
      const end = csv.slice(i).search(/,|\r\n/);
      cell = end === -1 ? csv.slice(i) : csv.slice(i, i + end);
      i = end === -1 ? csv.length : i + end;
    }
    if (/^[=+\-@\t\r]/.test(cell) && !NUMBER_CELL.test(cell)) return JSON.stringify(cell.slice(0, 120));
    if (csv[i] === ',') i++;
    else if (csv.startsWith('\r\n', i)) i += 2;
  }
  return undefined;
}

/** Every string (keys too) of a JSON value, one a line: leaks are looked for in what a client would read. */
function stringsOf(v: unknown): string {
  const out: string[] = [];
  const walk = (x: unknown) => {
    if (typeof x === 'string') out.push(x);
    else if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === 'object') {
      for (const [k, e] of Object.entries(x)) {
        out.push(k);
        walk(e);
      }
    }
  };
  walk(v);
  return out.join('\n');
}

/**
 * Error codes no answer may carry: each would tell a caller something about a tenant (issue #27). A
 * domain without external auth answers token/issue EXTERNAL with the 401 of every refusal.
 */
const DISCLOSING_CODES = new Set(['ERROR_EXTERNAL_AUTH_NOT_CONFIGURED']);

/**
 * What the fuzzer asserts of every answer: no 5xx; every error in the envelope
 * `{"error": {"code": string, "message": string, "status": number}}` with `status` equal to the HTTP
 * status; no stack trace, path, SQL or database error text in any answer; no disclosing code.
 */
export function checkAnswer(o: Outcome, method: string): Problem[] {
  if (o.status === undefined) return [{ kind: 'no-answer', detail: o.error ?? 'no answer' }];
  const problems: Problem[] = [];
  let parsed: unknown;
  try {
    parsed = o.text ? JSON.parse(o.text) : undefined;
  } catch {
    parsed = undefined;
  }
  const err = (parsed as { error?: { code?: unknown; message?: unknown; status?: unknown } } | undefined)?.error;
  const code = typeof err?.code === 'string' ? err.code : undefined;
  if (o.status >= 500) problems.push({ kind: '5xx', status: o.status, code, detail: `HTTP ${o.status} ${o.text.slice(0, 300)}` });
  if (code && DISCLOSING_CODES.has(code)) problems.push({ kind: 'disclosure', status: o.status, code, detail: `${code} tells whether a domain has external auth` });
  if (o.status >= 400 && method !== 'HEAD') {
    const ok =
      parsed !== null &&
      typeof parsed === 'object' &&
      err !== null &&
      typeof err === 'object' &&
      typeof err.code === 'string' &&
      typeof err.message === 'string' &&
      typeof err.status === 'number' &&
      err.status === o.status &&
      /^application\/json/.test(o.contentType ?? '');
    if (!ok) problems.push({ kind: 'envelope', status: o.status, code, detail: `HTTP ${o.status} (${o.contentType ?? 'no type'}) ${o.text.slice(0, 300)}` });
  }
  // Error answers are checked for every leak; successful ones (which carry stored, caller-made data) for stacks and paths.
  const leak = leakIn(parsed === undefined ? o.text : stringsOf(parsed), o.status < 400);
  if (leak) problems.push({ kind: 'leak', status: o.status, code, detail: leak });
  const echoed = o.text.indexOf(OUTBOUND_MARKER);
  if (echoed >= 0) {
    problems.push({ kind: 'outbound-echo', status: o.status, code, detail: `quotes what an outbound target served: ${JSON.stringify(o.text.slice(Math.max(0, echoed - 80), echoed + 60))}` });
  }
  if (o.status < 300 && /^text\/csv/.test(o.contentType ?? '')) {
    const formula = formulaCellIn(o.text);
    if (formula) problems.push({ kind: 'csv-formula', status: o.status, detail: `a CSV cell a spreadsheet would run as a formula: ${formula}` });
  }
  return problems;
}

/** Verbs that do not address one record by its id (they list, count or make records). */
const NOT_BY_ID = new Set(['list', 'stat', 'analyze', 'create', 'register', 'export', 'issue', 'grant']);

/**
 * Object-level authorization (OWASP API1, docs/security.md): an operation that addresses one record by
 * its id (`<resource>/get`, `update`, `delete`, `enable`, ...), called with another domain's token and
 * the id of a record the setup made in the fuzz domain, must not succeed.
 */
export function checkTenancy(c: Case, o: Outcome, pools: Pools): Problem[] {
  if (c.auth.kind !== 'other-domain' || o.status === undefined || o.status >= 300 || c.target.kind !== 'operation') return [];
  const [resource, verb] = c.path.split('/').slice(-2);
  if (!resource || !verb || NOT_BY_ID.has(verb)) return [];
  const key = `${resource.replace(/-/g, '_')}_id`;
  const body = c.body as Record<string, unknown> | undefined;
  const id = body && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, key) ? body[key] : undefined;
  if (!pools.owns(c.target.app, key, id)) return [];
  return [{ kind: 'authz', status: o.status, detail: `another domain's token reached ${key} ${String(id)} of the fuzz domain: HTTP ${o.status} ${o.text.slice(0, 200)}` }];
}
