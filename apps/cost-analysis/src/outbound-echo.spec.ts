import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { OUTBOUND_REFUSED_MESSAGE } from '@platform/net';
import { bearer, waitFor } from '@platform/testing';
import { createTestCostAnalysis } from './test-support';

/**
 * issue #32: an http-file data source pointed at a service that is not a cost file (identity's
 * /metrics, Redis) must not read it back to the tenant. The loopback target serves a marker in every
 * way a task could echo it: as a value the field mapper makes `cost`, as a currency, a billed date, a
 * project, in a 404's body, and as bytes that are not HTTP. No task or job answer may quote it, and a
 * closed port, a reset, a 404, a 500 and garbage all fail the same way.
 */
const MARKER = 'MARKER-cost-9c2d5e';

jest.setTimeout(60_000);

describe('cost-analysis: outbound fetches echo nothing', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let target: http.Server;
  let base: string;
  let owner: string;

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    t.startWorker();
    target = http.createServer((req, res) => {
      const path = req.url ?? '';
      // what a metrics endpoint looks like: its first line becomes the header, each following line a row
      if (path === '/metrics') return res.end(`# HELP ${MARKER} a counter\n${MARKER}_total 1\n${MARKER}_other 2\n`);
      if (path === '/values.csv') {
        return res.end(
          `cost,currency,billed_date,project_id\n${MARKER},USD,2024-01-02,\n1,${MARKER},2024-01-02,\n1,USD,${MARKER},\n1,USD,2024-01-02,${MARKER}\n1e999,USD,2024-01-02,\n`,
        );
      }
      if (path === '/reset') return req.socket.destroy();
      if (path === '/garbage') return req.socket.end(`${MARKER}\r\n\r\n`);
      if (path === '/error') return res.writeHead(500).end(MARKER);
      res.writeHead(404).end(MARKER);
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    target.closeAllConnections();
    await new Promise((r) => target.close(r));
    await t?.close();
  });

  const ok = async (path: string, body: object) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', owner).send(body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  /** Registers a data source for `url`, syncs it and answers its job and tasks as the API answers them. */
  const collect = async (name: string, url: string, options: object = {}) => {
    const ds = await ok('data-source/register', { name, resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: url, ...options } } });
    const started = await ok('data-source/sync', { data_source_id: ds.data_source_id });
    const job = await waitFor(async () => {
      const j = await ok('job/get', { job_id: started.job_id });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 40_000);
    const tasks = (await ok('job-task/list', { job_id: started.job_id })).results;
    return { job, tasks, text: JSON.stringify({ job, tasks }) };
  };

  it('a field mapper aimed at a metrics endpoint reads nothing of it back', async () => {
    const header = `# HELP ${MARKER} a counter`;
    const { tasks, text } = await collect('metrics', `${base}/metrics`, {
      field_mapper: { cost: header },
      default_vars: { currency: 'USD', billed_date: '2024-01-02' },
    });
    expect(tasks[0]).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_INVALID_COST_DATA' });
    expect(tasks[0].error_message).toMatch(/line 2: cost is not a number/);
    expect(text).not.toContain(MARKER);
  });

  it('names the line and the field of a bad value, never the value', async () => {
    const { tasks, text } = await collect('values', `${base}/values.csv`);
    expect(tasks[0]).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_INVALID_COST_DATA' });
    for (const part of ['line 2: cost is not a number', 'line 3: currency', 'line 4: billed date', 'line 5: project_id', 'line 6: cost is not a finite number']) {
      expect(tasks[0].error_message).toContain(part);
    }
    expect(text).not.toContain(MARKER);
  });

  it('a closed port, a reset, garbage, a 404 and a 500 fail alike, quoting nothing', async () => {
    const seen = new Set<string>();
    for (const [name, url] of [
      ['closed', 'http://127.0.0.1:1/x.csv'],
      ['reset', `${base}/reset`],
      ['garbage', `${base}/garbage`],
      ['missing', `${base}/missing`],
      ['error', `${base}/error`],
    ]) {
      const { job, tasks, text } = await collect(name, url);
      expect([name, tasks[0].status, tasks[0].error_code]).toEqual([name, 'FAILURE', 'ERROR_OUTBOUND_REFUSED']);
      expect(tasks[0].error_message).toBe(`${OUTBOUND_REFUSED_MESSAGE} (key = options.base_url)`);
      expect(text).not.toMatch(new RegExp(`${MARKER}|ECONN|HPE_|answered`));
      seen.add(`${job.error_code} ${tasks[0].error_code} ${tasks[0].error_message}`);
    }
    expect(seen.size).toBe(1);
  });
});
