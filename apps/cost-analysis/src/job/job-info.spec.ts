import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestCostAnalysis, serveFiles } from '../test-support';

/**
 * JobInfo's `synced_accounts` (upstream's job.proto, issue #29): answered by sync, get, list and
 * cancel, empty as upstream answers it when the plugin's get_tasks names no account (no built-in
 * plugin routes by account), and cut by `only` like every other field.
 */
jest.setTimeout(60_000);

describe('JobInfo synced_accounts', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    files = await serveFiles({ '/c.csv': 'cost,currency,account,year,month,day\n1.5,USD,acc-1,2025,3,1\n' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const ok = async (path: string, body: object) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', owner).send(body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  it('is answered by data-source/sync, job/get, job/list and job/cancel, and `only` keeps or cuts it', async () => {
    const ds = await ok('data-source/register', {
      name: 'ext',
      resource_group: 'WORKSPACE',
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: files.url('/c.csv') } },
      schedule: { state: 'DISABLED' },
    });
    const job = await ok('data-source/sync', { data_source_id: ds.data_source_id }); // no worker: stays IN_PROGRESS
    expect(job).toMatchObject({ status: 'IN_PROGRESS', total_tasks: 1, synced_accounts: [] });
    expect((await ok('job/get', { job_id: job.job_id })).synced_accounts).toEqual([]);
    const listed = await ok('job/list', { data_source_id: ds.data_source_id });
    expect(listed.results.map((j: { synced_accounts: unknown }) => j.synced_accounts)).toEqual([[]]);
    expect((await ok('job/list', { query: { only: ['job_id', 'synced_accounts'] } })).results).toEqual([{ job_id: job.job_id, synced_accounts: [] }]);
    expect((await ok('job/list', { query: { only: ['job_id'] } })).results).toEqual([{ job_id: job.job_id }]);
    expect((await ok('job/cancel', { job_id: job.job_id })).synced_accounts).toEqual([]);
  });
});
