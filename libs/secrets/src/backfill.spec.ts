import { randomBytes } from 'node:crypto';
import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { sealColumn, type SealedColumn } from './backfill';
import { SecretBox } from './secret-box';
import { isSealedJson, isSealedText, openJson, openText, sealedJsonSql, sealedTextSql, sealJson, sealText, secretAad } from './stored';

describe('sealColumn (the backfill), on a real PostgreSQL', () => {
  let db: TempDatabase;
  const k1 = randomBytes(32);
  const box = new SecretBox([k1]);
  const jsonColumn: SealedColumn = { table: 'thing', key: ['domain_id', 'thing_id'], column: 'secret', form: 'json', aad: (r) => secretAad('t:thing.secret', r.domain_id, r.thing_id) };
  const textColumn: SealedColumn = { table: 'user', key: ['domain_id', 'user_id'], column: 'otp', form: 'text', aad: (r) => secretAad('t:user.otp', r.domain_id, r.user_id) };

  beforeAll(async () => {
    db = await createTempDatabase({ prefix: 'secrets' });
    await db.pool.query(`CREATE TABLE thing (domain_id text, thing_id text, secret jsonb, PRIMARY KEY (domain_id, thing_id))`);
    await db.pool.query(`CREATE TABLE "user" (domain_id text, user_id text, otp text, PRIMARY KEY (domain_id, user_id))`);
  });
  afterAll(() => db?.drop());

  it('seals every plain JSON value, in batches, and leaves sealed ones alone; a second run does nothing', async () => {
    const already = sealJson(box, { k: 'sealed-before' }, jsonColumn.aad({ domain_id: 'd1', thing_id: 't-000' }));
    await db.pool.query(`INSERT INTO thing VALUES ('d1', 't-000', $1)`, [JSON.stringify(already)]);
    for (let i = 1; i <= 7; i++) await db.pool.query(`INSERT INTO thing VALUES ($1, $2, $3)`, [`d${i % 2}`, `t-${String(i).padStart(3, '0')}`, JSON.stringify({ k: `plain-${i}` })]);
    await db.pool.query(`INSERT INTO thing VALUES ('d1', 't-null', NULL)`);

    expect(await sealColumn(db.pool, box, jsonColumn, 3)).toEqual({ sealed: 7, resealed: 0, unreadable: 0 });
    const { rows } = await db.pool.query(`SELECT domain_id, thing_id, secret, secret::text AS raw FROM thing WHERE secret IS NOT NULL ORDER BY thing_id`);
    expect(rows).toHaveLength(8);
    for (const r of rows) {
      expect(isSealedJson(r.secret)).toBe(true);
      expect(r.raw).not.toMatch(/plain-|sealed-before/);
    }
    expect(rows[0].secret).toEqual(already);
    expect(rows.map((r) => openJson(box, r.secret, jsonColumn.aad(r)))).toEqual([{ k: 'sealed-before' }, ...[1, 2, 3, 4, 5, 6, 7].map((i) => ({ k: `plain-${i}` }))]);
    expect(await sealColumn(db.pool, box, jsonColumn, 3)).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
  });

  it('seals plain text, keeps empty and null text as they are, and two runs at once seal each value once', async () => {
    for (let i = 0; i < 40; i++) await db.pool.query(`INSERT INTO "user" VALUES ('d1', $1, $2)`, [`u-${i}`, `PLAIN${i}SECRET`]);
    await db.pool.query(`INSERT INTO "user" VALUES ('d1', 'no-otp', ''), ('d1', 'null-otp', NULL)`);
    const reports = await Promise.all([sealColumn(db.pool, box, textColumn, 5), sealColumn(db.pool, box, textColumn, 5)]);
    expect(reports[0].sealed + reports[1].sealed).toBe(40);
    expect(reports.map((r) => r.resealed + r.unreadable)).toEqual([0, 0]);
    const { rows } = await db.pool.query(`SELECT domain_id, user_id, otp FROM "user" ORDER BY user_id`);
    for (const r of rows) {
      if (r.user_id === 'no-otp') expect(r.otp).toBe('');
      else if (r.user_id === 'null-otp') expect(r.otp).toBeNull();
      else {
        expect(isSealedText(r.otp)).toBe(true);
        expect(openText(box, r.otp, textColumn.aad(r))).toBe(`PLAIN${r.user_id.slice(2)}SECRET`);
      }
    }
  });

  it('seals again with the current key what a previous key sealed, and counts what does not open', async () => {
    const next = randomBytes(32);
    const rotated = new SecretBox([next, k1]);
    await db.pool.query(`UPDATE "user" SET otp = (SELECT otp FROM "user" WHERE user_id = 'u-1') WHERE user_id = 'u-2'`); // copied: does not open
    expect(await sealColumn(db.pool, rotated, textColumn, 7)).toEqual({ sealed: 0, resealed: 39, unreadable: 1 });
    expect(await sealColumn(db.pool, rotated, jsonColumn, 3)).toEqual({ sealed: 0, resealed: 8, unreadable: 0 });
    expect(await sealColumn(db.pool, rotated, textColumn, 7)).toEqual({ sealed: 0, resealed: 0, unreadable: 1 });

    const onlyNext = new SecretBox([next]);
    const users = await db.pool.query(`SELECT domain_id, user_id, otp FROM "user" WHERE otp LIKE 'sealed:%' AND user_id <> 'u-2'`);
    expect(users.rows).toHaveLength(39);
    for (const r of users.rows) expect(openText(onlyNext, r.otp, textColumn.aad(r))).toBe(`PLAIN${r.user_id.slice(2)}SECRET`);
    const things = await db.pool.query(`SELECT domain_id, thing_id, secret FROM thing WHERE secret IS NOT NULL`);
    for (const r of things.rows) expect(openJson(onlyNext, r.secret, jsonColumn.aad(r))).toEqual({ k: expect.any(String) });
  });

  it('tells sealed from plain in SQL exactly as in JavaScript', async () => {
    const sealed = sealJson(box, { a: 1 }, 'x');
    const jsonValues: unknown[] = [sealed, { ...sealed, sealed: 'v2' }, { sealed: 'v1' }, {}, { a: 1 }, [], ['sealed'], 'sealed:v1:x', 1, null];
    for (const v of jsonValues) {
      const { rows } = await db.pool.query(`SELECT ${sealedJsonSql('$1::jsonb')} AS s`, [JSON.stringify(v)]);
      expect([v, rows[0].s]).toEqual([v, isSealedJson(v)]);
    }
    for (const v of [sealText(box, 'A', 'x'), 'sealed:v1:', 'sealed:v2:x', 'SEALED:V1:x', 'JBSWY3DP', '']) {
      const { rows } = await db.pool.query(`SELECT ${sealedTextSql('$1::text')} AS s`, [v]);
      expect([v, rows[0].s]).toEqual([v, isSealedText(v)]);
    }
  });

  it('refuses identifiers that are not plain names', async () => {
    await expect(sealColumn(db.pool, box, { ...jsonColumn, table: 'thing; DROP TABLE thing' })).rejects.toThrow(/identifier/);
  });
});
