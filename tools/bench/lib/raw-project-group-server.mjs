// The baseline of tools/bench/identity-project-group.mjs: a minimal node:http + pg server answering
// project-group/get with the same query identity runs, and project-group/list with the statement
// identity's query compiler emits for the same request (RAW_LIST_SQL: the bundled
// lib/project-group-list-sql.ts), in its own process like the app it is compared with.
import http from 'node:http';
import { createRequire } from 'node:module';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const { listStatement } = createRequire(import.meta.url)(process.env.RAW_LIST_SQL);
// The statement is fixed once, as a hand-written server would have it; each request binds its values.
const list = listStatement('d1', 'ws-1', 'x', 20);
if (JSON.stringify(list.values) !== JSON.stringify(['d1', 'ws-1', '%x%', 20])) throw new Error(`the list statement's parameters changed: ${JSON.stringify(list.values)}`);

const answer = (res, value) => {
  const out = JSON.stringify(value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
  res.end(out);
};
const routes = {
  '/identity/v2/project-group/get': async ({ project_group_id }) => {
    const { rows } = await pool.query('SELECT * FROM project_group WHERE domain_id = $1 AND project_group_id = $2', ['d1', project_group_id]);
    return rows[0];
  },
  '/identity/v2/project-group/list': async ({ query }) => {
    const { rows } = await pool.query(list.text, ['d1', 'ws-1', `%${query.filter[0].v}%`, query.page.limit]);
    const results = [];
    for (const r of rows) {
      if (r.__qrow !== 1) continue;
      delete r.__qrow;
      delete r.__qtotal;
      results.push(r);
    }
    return { results, total_count: Number(rows[0]?.__qtotal ?? 0) };
  },
};
const server = http.createServer((req, res) => {
  if (req.url === '/readyz') return answer(res, { status: 'ok' });
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => answer(res, await routes[req.url](JSON.parse(body))));
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
