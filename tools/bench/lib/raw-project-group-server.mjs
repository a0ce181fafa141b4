// The baseline of tools/bench/identity-get.mjs: a minimal node:http + pg server answering
// project-group/get with the same query, in its own process like the app it is compared with.
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    const { project_group_id } = JSON.parse(body);
    const { rows } = await pool.query('SELECT * FROM project_group WHERE domain_id = $1 AND project_group_id = $2', ['d1', project_group_id]);
    const out = JSON.stringify(rows[0]);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
