import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestCostAnalysis } from './test-support';

/**
 * Issue #29 §2: a token carries its custom role's permissions and every module checks them as
 * upstream's authorization handler does (the operation's permission must start with one of them).
 * A role of `inventory:` only opens no cost-analysis operation; `cost-analysis:DataSource.read` opens
 * that one and nothing else.
 */
describe('cost-analysis: custom role permissions', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  beforeAll(async () => {
    t = await createTestCostAnalysis();
  });
  afterAll(() => t.close());

  const call = (path: string, auth: string, body: object = {}) => request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', auth).send(body);
  const member = (permissions: string[]) => bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', roleId: 'role-0123456789ab', permissions });

  it('an inventory-only role is refused on every cost-analysis operation it tries', async () => {
    const auth = await member(['inventory:']);
    for (const path of ['data-source/list', 'unified-cost/list', 'exchange-rate/list', 'data-source/get']) {
      const res = await call(path, auth, path.endsWith('get') ? { data_source_id: 'ds-x' } : {});
      expect([path, res.status, res.body.error?.code]).toEqual([path, 403, 'ERROR_PERMISSION_DENIED']);
      expect(res.body.error.message).toContain('cost-analysis:');
    }
  });

  it('a prefix opens what it covers and nothing else; `cost-analysis:` and `*` open the module', async () => {
    const narrow = await member(['inventory:', 'cost-analysis:DataSource.read']);
    expect((await call('data-source/list', narrow)).status).toBe(200);
    expect((await call('unified-cost/list', narrow)).status).toBe(403);
    for (const permissions of [['cost-analysis:'], ['cost-analysis:*'], ['*']]) {
      const auth = await member(permissions);
      expect((await call('data-source/list', auth)).status).toBe(200);
      expect((await call('unified-cost/list', auth)).status).toBe(200);
    }
  });
});
