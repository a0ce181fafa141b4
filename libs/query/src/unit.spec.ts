import { applyOnly, defineResource, parseIso8601, parseQuery, parseTimediff, resolveOnly, splitKey } from './index';
import { resource } from './test/fixture';
import { parsePeriodBound } from './time';
import { strftimeToPg } from './group';
import { baseScope } from './base';
import { Ctx } from './sql';

describe('time', () => {
  const now = new Date('2024-03-14T15:16:17.000Z'); // a Thursday
  test.each([
    ['now', '2024-03-14T15:16:17.000Z'],
    ['now/d', '2024-03-14T00:00:00.000Z'],
    ['now/w', '2024-03-11T00:00:00.000Z'],
    ['now/m', '2024-03-01T00:00:00.000Z'],
    ['now/d - 7d', '2024-03-07T00:00:00.000Z'],
    ['now+1h', '2024-03-14T16:16:17.000Z'],
    [' now - 30m', '2024-03-14T14:46:17.000Z'],
    ['now/m - 2w', '2024-02-16T00:00:00.000Z'],
    ['now - 10s', '2024-03-14T15:16:07.000Z'],
  ])('timediff %j', (v, want) => {
    expect(parseTimediff(v, now)?.toISOString()).toBe(want);
  });
  test.each(['now - 3y', 'today', 'now -', 'now/y', '', 'now - 1.5d'])('bad timediff %j', (v) => {
    expect(parseTimediff(v, now)).toBeNull();
  });
  test.each([
    ['2024-01-05', '2024-01-05T00:00:00.000Z'],
    ['2024-01-05T10:00:00Z', '2024-01-05T10:00:00.000Z'],
    ['2024-01-05T10:00:00.123456+09:00', '2024-01-05T01:00:00.123Z'],
    ['2024-01-05 10:00', '2024-01-05T10:00:00.000Z'],
    ['2024-01', '2024-01-01T00:00:00.000Z'],
    ['2024-01-05T10:00:00-0130', '2024-01-05T11:30:00.000Z'],
  ])('iso %j', (v, want) => {
    expect(parseIso8601(v)?.toISOString()).toBe(want);
  });
  test.each(['2024-02-30', '2024-13-01', 'yesterday', '2024-01-05T25:00', 12, null])('bad iso %j', (v) => {
    expect(parseIso8601(v)).toBeNull();
  });
  test('period bounds', () => {
    expect(parsePeriodBound('2024', 'end')?.toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(parsePeriodBound('2024-12', 'end')?.toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(parsePeriodBound('2024-02-29', 'end')?.toISOString()).toBe('2024-03-01T00:00:00.000Z');
    expect(parsePeriodBound('2024-02', 'start')?.toISOString()).toBe('2024-02-01T00:00:00.000Z');
    expect(parsePeriodBound('2023-02-29', 'start')).toBeNull();
  });
  test('strftime', () => {
    expect(strftimeToPg('%Y-%m-%d')).toBe('YYYY"-"MM"-"DD');
    expect(strftimeToPg('%H:%M:%S %% "x"')).toBe('HH24":"MI":"SS" % \\"x\\""');
    expect(strftimeToPg('%Q')).toBeNull();
  });
});

describe('applyOnly / resolveOnly', () => {
  const obj = { id: 'a', name: 'n', tags: { env: 'prod', team: 'x' }, disks: [{ size: 1, type: 'gp2' }, { size: 2 }], n: null };
  test('dotted paths, arrays of sub-documents, missing keys', () => {
    expect(applyOnly(obj, ['id', 'tags.env', 'disks.size', 'nope', 'n'])).toEqual({ id: 'a', tags: { env: 'prod' }, disks: [{ size: 1 }, { size: 2 }], n: null });
    expect(applyOnly(obj, ['tags', 'tags.env'])).toEqual({ tags: { env: 'prod', team: 'x' } });
    expect(applyOnly(obj, undefined)).toBe(obj);
    expect(applyOnly(obj, [])).toBe(obj);
  });
  test('resolveOnly adds sort keys; minimal wins', () => {
    expect(resolveOnly(resource, parseQuery({ only: ['name'], sort: [{ key: 'cost' }] }))).toEqual(['name', 'cost']);
    expect(resolveOnly(resource, parseQuery({ only: ['name'], minimal: true }))).toEqual(['cloud_service_id', 'name']);
    expect(resolveOnly(resource, parseQuery({}))).toBeUndefined();
  });
});

describe('defineResource', () => {
  const base = { table: 't', idKey: 'id', keywordKeys: [], fields: { id: { column: 'id', type: 'string' as const } } };
  test('validates the spec', () => {
    expect(() => defineResource({ ...base, idKey: 'x' })).toThrow(/idKey/);
    expect(() => defineResource({ ...base, keywordKeys: ['nope'] })).toThrow(/keyword/);
    expect(() => defineResource({ ...base, dateKey: 'id', fields: { id: { column: 'id', type: 'integer' } } })).toThrow(/dateKey/);
    expect(() => defineResource({ ...base, fields: { ...base.fields, 'a..b': { column: 'x', type: 'string' } } })).toThrow(/bad key/);
    expect(() => defineResource({ ...base, maxLimit: -1 })).toThrow(/maxLimit/);
    expect(defineResource({ ...base, table: 'app.my table' }).table).toBe('"app.my table"');
    expect(defineResource({ ...base, table: 'app.things' }).table).toBe('"app"."things"');
    expect(defineResource({ ...base, fields: { id: { column: 'we"ird', type: 'string' } } }).fields.get('id')?.column).toBe('"we""ird"');
  });
  test('splitKey: longest declared prefix', () => {
    const r = defineResource({ ...base, fields: { ...base.fields, reference: { column: 'ref', type: 'json' }, 'reference.resource_id': { column: 'rid', type: 'string' } } });
    expect(splitKey(r.fields, 'reference.resource_id')?.name).toBe('reference.resource_id');
    expect(splitKey(r.fields, 'reference.external_link.x')).toMatchObject({ name: 'reference', path: ['external_link', 'x'] });
    expect(splitKey(r.fields, 'nope.x')).toBeNull();
  });
});

describe('baseScope', () => {
  test('is built once per resource and alias, and its columns cannot be changed', () => {
    const t = baseScope(resource, 't');
    expect(baseScope(resource, 't')).toBe(t);
    const s0 = baseScope(resource, 's0');
    expect(s0).not.toBe(t);
    expect(t.resolve('name', 'k', new Ctx()).sql).toBe('t."name"');
    expect(s0.resolve('name', 'k', new Ctx()).sql).toBe('s0."name"');
    const other = defineResource({ ...resource.spec });
    expect(baseScope(other, 't')).not.toBe(t);
    expect(() => {
      (t.cols.get('name') as { sql: string }).sql = 'x';
    }).toThrow();
    expect(t.resolve('name', 'k', new Ctx()).sql).toBe('t."name"');
  });
});
