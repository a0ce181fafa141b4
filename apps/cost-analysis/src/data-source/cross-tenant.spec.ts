import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestCostAnalysis, serveFiles } from '../test-support';

/**
 * Object-level authorization (OWASP API1, docs/security.md): every per-record operation of data
 * sources, jobs and job tasks answers another domain's (and another workspace's) caller ERROR_NOT_FOUND,
 * and leaves the record as it was.
 */
jest.setTimeout(60_000);

describe('cost-analysis: another tenant reaches no record by id', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;
  let otherDomain: string;
  let otherWorkspace: string;
  let dsId: string;

  const call = (path: string, auth: string, body: object) => request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', auth).send(body);

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    files = await serveFiles({ '/a.csv': 'cost,currency,year,month,day\n1.5,USD,2024,5,1\n' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    otherDomain = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherWorkspace = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'owner2' });
    const ds = await call('data-source/register', owner, { name: 'csv', resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: files.url('/a.csv') } } });
    expect(ds.status).toBe(200);
    dsId = ds.body.data_source_id;
  });
  afterAll(async () => {
    await t?.close();
    await files?.close();
  });

  it('data sources: get, update, update-plugin, enable, disable, sync, verify-plugin and deregister are 404 and change nothing', async () => {
    const before = (await call('data-source/get', owner, { data_source_id: dsId })).body;
    const ops: [string, object][] = [
      ['data-source/get', {}],
      ['data-source/update', { name: 'taken', tags: { x: '1' } }],
      ['data-source/update-plugin', { options: { base_url: 'http://127.0.0.1:1/x.csv' } }],
      ['data-source/disable', {}],
      ['data-source/enable', {}],
      ['data-source/sync', {}],
      ['data-source/verify-plugin', {}],
      ['data-source/deregister', {}],
    ];
    for (const auth of [otherDomain, otherWorkspace]) {
      for (const [path, body] of ops) {
        const res = await call(path, auth, { data_source_id: dsId, ...body });
        expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'ERROR_NOT_FOUND']);
      }
    }
    expect((await call('data-source/get', owner, { data_source_id: dsId })).body).toEqual(before);
    const jobs = await call('job/list', owner, { data_source_id: dsId });
    expect(jobs.body.total_count).toBe(0); // no sync was started by the refused calls
  });

  it('jobs and job tasks: get, cancel and the lists show another tenant nothing', async () => {
    const sync = await call('data-source/sync', owner, { data_source_id: dsId });
    expect(sync.status).toBe(200);
    const jobId = sync.body.job_id;
    for (const auth of [otherDomain, otherWorkspace]) {
      for (const path of ['job/get', 'job/cancel']) {
        const res = await call(path, auth, { job_id: jobId });
        expect([path, res.status]).toEqual([path, 404]);
      }
      expect((await call('job/list', auth, {})).body.total_count).toBe(0);
      expect((await call('job-task/list', auth, {})).body.total_count).toBe(0);
      expect((await call('data-source/list', auth, {})).body.total_count).toBe(0);
    }
    const tasks = await call('job-task/list', owner, { job_id: jobId });
    for (const task of tasks.body.results as { job_task_id: string }[]) {
      for (const auth of [otherDomain, otherWorkspace]) expect((await call('job-task/get', auth, { job_task_id: task.job_task_id })).status).toBe(404);
    }
    expect((await call('job/get', owner, { job_id: jobId })).body.status).not.toBe('CANCELED');
  });
});
