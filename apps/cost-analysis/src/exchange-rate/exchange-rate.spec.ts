import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestCostAnalysis } from '../test-support';

describe('exchange rates', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let admin: string;
  let owner: string;
  let other: string;

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    other = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN' });
  });
  afterAll(() => t.close());

  const call = (verb: string, auth: string, body: object) => request(t.app).post(`/cost-analysis/v1/exchange-rate/${verb}`).set('Authorization', auth).send(body);

  it('lists the default domain rates from configuration, is_default true', async () => {
    const res = await call('list', owner, { domain_id: 'd1' });
    expect(res.status).toBe(200);
    expect(res.body.total_count).toBe(Object.keys(t.config.exchange.defaults).length);
    expect(res.body.results).toContainEqual({ currency: 'KRW', rate: t.config.exchange.defaults.KRW, state: 'ENABLED', is_default: true, domain_id: 'd1' });
  });

  it('sets, disables, enables and resets an override for one domain only', async () => {
    const set = await call('set', admin, { domain_id: 'd1', currency: 'JPY', rate: 140.5 });
    expect(set.body).toEqual({ currency: 'JPY', rate: 140.5, state: 'ENABLED', is_default: false, domain_id: 'd1' });
    expect((await call('set', admin, { domain_id: 'd1', currency: 'JPY', rate: 141 })).body.rate).toBe(141);
    expect((await call('get', owner, { domain_id: 'd1', currency: 'JPY' })).body).toMatchObject({ rate: 141, is_default: false });
    expect((await call('get', other, { domain_id: 'd2', currency: 'JPY' })).body).toMatchObject({ rate: t.config.exchange.defaults.JPY, is_default: true });

    const disabled = await call('disable', admin, { domain_id: 'd1', currency: 'JPY' });
    expect(disabled.body).toEqual({ currency: 'JPY', rate: t.config.exchange.defaults.JPY, state: 'DISABLED', is_default: true, domain_id: 'd1' });
    expect((await call('enable', admin, { domain_id: 'd1', currency: 'JPY' })).body).toMatchObject({ rate: 141, state: 'ENABLED', is_default: false });
    const list = (await call('list', owner, { domain_id: 'd1' })).body.results;
    expect(list.find((r: { currency: string }) => r.currency === 'JPY')).toMatchObject({ rate: 141, is_default: false });

    expect((await call('reset', admin, { domain_id: 'd1', currency: 'JPY' })).body).toEqual({
      currency: 'JPY', rate: t.config.exchange.defaults.JPY, state: 'ENABLED', is_default: true, domain_id: 'd1',
    });
    const noOverride = await call('enable', admin, { domain_id: 'd1', currency: 'JPY' });
    expect(noOverride.body.error).toMatchObject({ code: 'ERROR_CHANGE_STATE', status: 400 });
  });

  it('validates currency, rate and domain', async () => {
    expect((await call('set', admin, { domain_id: 'd1', currency: 'XYZ', rate: 1 })).body.error).toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    expect((await call('set', admin, { domain_id: 'd1', currency: 'CHF', rate: 1 })).body.error).toMatchObject({ code: 'ERROR_UNSUPPORTED_CURRENCY', status: 400 });
    expect((await call('set', admin, { domain_id: 'd1', currency: 'KRW', rate: 0 })).body.error.message).toContain('rate');
    expect((await call('set', admin, { domain_id: 'd1', currency: 'KRW', rate: -3 })).status).toBe(400);
    expect((await call('set', admin, { domain_id: 'd1', currency: 'KRW', rate: '12' })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
    expect((await call('set', admin, { domain_id: 'd1', currency: 'USD', rate: 2 })).body.error.message).toContain('base currency');
    expect((await call('set', admin, { currency: 'KRW', rate: 1000 })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await call('set', admin, { domain_id: 'd2', currency: 'KRW', rate: 1000 })).status).toBe(403);
    expect((await call('set', owner, { domain_id: 'd1', currency: 'KRW', rate: 1000 })).status).toBe(403);
    expect((await request(t.app).post('/cost-analysis/v1/exchange-rate/list').send({ domain_id: 'd1' })).status).toBe(401);
  });
});
