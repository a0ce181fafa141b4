import { BODY_LIMIT } from './hostile';
import { Raw, withKey } from './json';
import type { Case, Role, Target } from './gen';
import { DOMAIN, type Field } from './vocab';

/**
 * The known attacks, sent to every target on every run before the random cases (a random run of a
 * few thousand cases may well miss one): the reproductions in the shape of each operation.
 */
export interface CorpusCase {
  name: string;
  case: Case;
}

const deepArray = (d: number) => new Raw(Buffer.from('['.repeat(d) + '1' + ']'.repeat(d)), `${d}-deep […1…]`);

function firstOf(fields: Field[], ...types: string[]): string | undefined {
  return fields.find((f) => types.includes(f.type))?.key;
}

/** The attacks on the query DSL, as `query` bodies for a list, stat or analyze. */
function queries(t: Target): { name: string; query: Record<string, unknown> }[] {
  const json = firstOf(t.fields, 'json', 'json_array') ?? 'tags';
  const str = firstOf(t.fields, 'string') ?? 'name';
  const kind = t.path.endsWith('/stat') ? 'stat' : t.path.endsWith('/analyze') ? 'analyze' : 'list';
  // Each query also needs what makes it one of its kind: a stat its distinct, an analyze its fields.
  const shape = (q: Record<string, unknown>) =>
    kind === 'stat' ? { distinct: str, ...q } : kind === 'analyze' ? { fields: { n: { operator: 'count' } }, ...q } : q;
  const filters: [string, unknown][] = [
    ['match value with a dotted __proto__ key', { k: json, o: 'match', v: withKey({}, '__proto__.x', 1) }],
    ['match value with an own __proto__ key', { k: json, o: 'match', v: withKey({}, '__proto__', { domain_id: 'domain-fuzz-evil' }) }],
    ['filter key through __proto__', { k: `${json}.__proto__.x`, o: 'eq', v: 1 }],
    ['filter key constructor.prototype', { k: `${json}.constructor.prototype.x`, o: 'exists', v: true }],
    ['regex bomb', { k: str, o: 'regex', v: '^(.|.|.)*(.|.)*Z$' }],
    ['regex bomb for short strings', { k: str, o: 'regex', v: '^(.?){40}.{40}$' }],
    ['regex_in bomb', { k: str, o: 'regex_in', v: ['^(.*)*Z$', '^(.?){40}.{40}$'] }],
    ['50,000-deep filter value', { k: str, o: 'eq', v: deepArray(50_000) }],
    ['50,000-deep match value', { k: json, o: 'match', v: deepArray(50_000) }],
    ['100,000-character regex', { k: str, o: 'regex', v: 'a'.repeat(100_000) }],
  ];
  const out = filters.map(([name, c]) => ({ name, query: shape({ filter: [c] }) }));
  if (kind === 'list') {
    out.push({ name: 'only __proto__', query: { only: ['__proto__'] } }, { name: `only ${json}.__proto__.x`, query: { only: [`${json}.__proto__.x`] } });
    out.push({ name: 'sort by __proto__', query: { sort: [{ key: '__proto__' }] } });
  }
  if (kind === 'stat') {
    out.push(
      { name: 'distinct __proto__', query: { distinct: '__proto__' } },
      { name: 'group key named __proto__', query: { aggregate: [{ group: { keys: [{ key: str, name: '__proto__' }], fields: [{ name: 'constructor', operator: 'count' }] } }] } },
      { name: 'group key named __proto__.x', query: { aggregate: [{ group: { keys: [{ key: str, name: '__proto__.x' }] } }] } },
      { name: 'group key through __proto__', query: { aggregate: [{ group: { keys: [{ key: `${json}.__proto__`, name: 'k' }] } }] } },
    );
  }
  if (kind === 'analyze') {
    out.push(
      { name: 'analyze field named __proto__', query: { fields: withKey({}, '__proto__', { operator: 'count' }) } },
      { name: 'group_by __proto__', query: { group_by: ['__proto__', { key: str, name: 'constructor' }], fields: { n: { operator: 'count' } } } },
      { name: 'select named __proto__', query: { fields: { n: { operator: 'count' } }, select: withKey({}, '__proto__', 'n') } },
    );
  }
  return out;
}

/** The corpus of one target: the DSL attacks when it takes a query, and the body-level ones for all. */
export function corpusOf(t: Target, minimal: Record<string, unknown>): CorpusCase[] {
  if (t.kind !== 'operation') return [];
  const role: Role | undefined = t.roles === 'public' ? undefined : t.roles[0];
  const make = (name: string, body: unknown, extra: Partial<Case> = {}): CorpusCase => ({
    name,
    case: { target: t, method: 'POST', path: t.path, contentType: 'application/json', auth: role ? { kind: 'role', role } : { kind: 'none' }, body, notes: [`corpus: ${name}`], ...extra },
  });
  const out: CorpusCase[] = [];
  const props = t.schema?.properties ?? {};
  if (props.query) for (const q of queries(t)) out.push(make(q.name, { ...minimal, query: q.query }));
  if (props.options && t.path.endsWith('/export')) {
    for (const q of queries({ ...t, path: '/list' }).slice(0, 7)) out.push(make(`export: ${q.name}`, { ...minimal, options: [{ name: 'x', query_type: 'SEARCH', search_query: q.query }] }));
  }
  for (const k of ['tags', 'data', 'options', 'metadata', 'secret_filter']) {
    if (props[k]) {
      out.push(make(`${k} with an own __proto__ key`, { ...minimal, [k]: withKey({}, '__proto__', { x: 1 }) }));
      out.push(make(`${k} 50,000 levels deep`, { ...minimal, [k]: { a: deepArray(50_000) } }));
    }
  }
  out.push(make('a top-level __proto__ key', withKey({ ...minimal }, '__proto__', { domain_id: 'domain-fuzz-evil' })));
  out.push(make('a body one byte past the limit', { ...minimal, pad: 'p'.repeat(BODY_LIMIT) }));
  out.push(make('no body', undefined));
  return out.map((c) => ({ ...c, case: { ...c.case, body: c.case.body && domainFirst(c.case.body) } }));
}

/** `domain_id` as the token's when the minimal body has it. */
function domainFirst(body: unknown): unknown {
  const b = body as Record<string, unknown>;
  if (b && typeof b === 'object' && 'domain_id' in b && b.domain_id !== DOMAIN && typeof b.domain_id === 'string') b.domain_id = DOMAIN;
  return body;
}
