import { isSafeKey } from '@platform/core';

/** A usage error: exit code 2, the message on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface ParsedArgs {
  positional: string[];
  /** Flags that take a value (repeatable ones keep every value). */
  values: Map<string, string[]>;
  switches: Set<string>;
}

const SHORT: Record<string, string> = { p: 'param', f: 'filter', j: 'json', o: 'output', q: 'query', s: 'sort', c: 'columns', h: 'help' };
const SWITCHES = new Set(['help', 'minimal', 'count-only', 'no-headers', 'public']);

/** `--flag value`, `--flag=value`, `-p value`; `--` ends the flags. */
export function parseArgs(argv: string[]): ParsedArgs {
  const out: ParsedArgs = { positional: [], values: new Map(), switches: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      out.positional.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      inline = eq > 0 ? a.slice(eq + 1) : undefined;
    } else if (/^-[a-zA-Z]$/.test(a)) {
      name = SHORT[a[1]];
      if (!name) throw new UsageError(`unknown option ${a}`);
    }
    if (!name) {
      out.positional.push(a);
      continue;
    }
    if (SWITCHES.has(name)) {
      out.switches.add(name);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`${a} needs a value`);
    out.values.set(name, [...(out.values.get(name) ?? []), value]);
  }
  return out;
}

/** The one value of a flag (the last one given). */
export const valueOf = (a: ParsedArgs, name: string) => a.values.get(name)?.at(-1);

/** Sets `a.b.c` in `target`, refusing keys that would reach a prototype. */
export function setPath(target: Record<string, unknown>, dotted: string, value: unknown) {
  const keys = dotted.split('.');
  let node = target;
  keys.forEach((k, i) => {
    if (!isSafeKey(k)) throw new UsageError(`${dotted}: the key ${k} is not allowed`);
    if (!k) throw new UsageError(`empty key in ${dotted}`);
    if (i === keys.length - 1) {
      node[k] = value;
      return;
    }
    const next = Object.hasOwn(node, k) ? node[k] : undefined;
    if (next === undefined) node[k] = {};
    else if (!next || typeof next !== 'object' || Array.isArray(next)) throw new UsageError(`${dotted}: ${keys.slice(0, i + 1).join('.')} is not an object`);
    node = node[k] as Record<string, unknown>;
  });
}

/**
 * `-p key=value` (a string) and `-p key:=json` (a JSON value: numbers, booleans, lists, objects), with
 * dotted keys for nested fields (`-p tags.env=prod`).
 */
export function parseParams(params: string[], into: Record<string, unknown> = {}): Record<string, unknown> {
  for (const p of params) {
    const m = /^([^=:]+?)(:?)=(.*)$/s.exec(p);
    if (!m) throw new UsageError(`-p ${p}: expected key=value or key:=json`);
    const [, key, json, raw] = m;
    let value: unknown = raw;
    if (json) {
      try {
        value = JSON.parse(raw);
      } catch {
        throw new UsageError(`-p ${p}: the value after := is not JSON`);
      }
    }
    setPath(into, key.trim(), value);
  }
  return into;
}

/** Operators of `-f`, longest first so `>=` is not read as `>`. */
const FILTER_OPERATORS: [string, string][] = [
  ['!~', 'not_contain'],
  ['!=', 'not'],
  ['>=', 'gte'],
  ['<=', 'lte'],
  ['=', 'eq'],
  ['~', 'contain'],
  ['>', 'gt'],
  ['<', 'lt'],
  [':', 'in'],
];
export const FILTER_HELP = "key=v (eq)  key!=v (not)  key>v key>=v key<v key<=v  key~v (contain)  key!~v (not_contain)  key:a,b (in)";

const scalar = (v: string): unknown => {
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (v === 'true' || v === 'false') return v === 'true';
  if (v === 'null') return null;
  return v;
};

/** `-f 'key<op>value'` as a filter condition of the query DSL. Numbers, booleans and null are typed. */
export function parseFilter(f: string): { key: string; value: unknown; operator: string } {
  let best: { at: number; op: string; operator: string } | undefined;
  for (const [op, operator] of FILTER_OPERATORS) {
    const at = f.indexOf(op);
    if (at > 0 && (!best || at < best.at || (at === best.at && op.length > best.op.length))) best = { at, op, operator };
  }
  if (!best) throw new UsageError(`-f ${f}: expected key<op>value; operators: ${FILTER_HELP}`);
  const key = f.slice(0, best.at).trim();
  const raw = f.slice(best.at + best.op.length);
  const value = best.operator === 'in' ? raw.split(',').map((x) => scalar(x.trim())) : best.operator === 'contain' || best.operator === 'not_contain' ? raw : scalar(raw);
  return { key, value, operator: best.operator };
}
