import Redis from 'ioredis';
import { errors } from '@platform/errors';
import { choosePlugin, resolveRequestOf, upgradeModeOf } from './choose';
import { PluginEndpointResolver, type EndpointSource } from './resolver';
import type { EndpointCandidate } from './versions';

const builtin = { id: 'built-in' };
const redis = new Redis({ lazyConnect: true, host: '127.0.0.1' });
redis.on('error', () => {});
afterAll(() => redis.disconnect());

const resolverOf = (candidates: () => Promise<EndpointCandidate[]>) => {
  const source: EndpointSource = { candidates: () => candidates() };
  return new PluginEndpointResolver(redis, source);
};
const request = { domainId: 'domain-a', pluginId: 'plugin-x', version: '', upgradeMode: 'AUTO' as const };

describe('choosePlugin', () => {
  it('without a resolver, a built-in serves its id and any other id is a 404', async () => {
    await expect(choosePlugin(undefined, builtin, request)).resolves.toEqual({ kind: 'builtin', plugin: builtin });
    await expect(choosePlugin(undefined, undefined, request)).rejects.toMatchObject({ status: 404, code: 'ERROR_NOT_FOUND' });
  });

  it('a published version wins over a built-in of the same id', async () => {
    const resolver = resolverOf(async () => [{ version: '1.0.0', endpoint: 'grpc://127.0.0.1:50051', is_public: false }]);
    await expect(choosePlugin(resolver, builtin, request)).resolves.toMatchObject({ kind: 'remote', endpoint: 'grpc://127.0.0.1:50051', version: '1.0.0' });
  });

  it('nothing published: the built-in serves, and an id with no built-in is a 404', async () => {
    const resolver = resolverOf(async () => []);
    await expect(choosePlugin(resolver, builtin, request)).resolves.toEqual({ kind: 'builtin', plugin: builtin });
    await expect(choosePlugin(resolver, undefined, request)).rejects.toMatchObject({ status: 404 });
  });

  it('nothing published: find answers undefined and makes no error; resolve is the 404 naming what was asked', async () => {
    const resolver = resolverOf(async () => []);
    const made = jest.spyOn(errors, 'notFound');
    try {
      await expect(resolver.find(request)).resolves.toBeUndefined();
      await expect(choosePlugin(resolver, builtin, request)).resolves.toEqual({ kind: 'builtin', plugin: builtin });
      expect(made).not.toHaveBeenCalled();
    } finally {
      made.mockRestore();
    }
    await expect(resolver.resolve(request)).rejects.toMatchObject({ status: 404, message: expect.stringContaining('plugin-x') });
    const manual = { ...request, version: '2.0.0', upgradeMode: 'MANUAL' as const };
    await expect(resolver.resolve(manual)).rejects.toMatchObject({ status: 404, message: expect.stringContaining('plugin-x 2.0.0') });
    await expect(choosePlugin(resolver, undefined, manual)).rejects.toMatchObject({ status: 404, message: expect.stringContaining('plugin-x 2.0.0') });
  });

  it('a table that cannot be read is a 503, never a silent fall-back to the built-in', async () => {
    const resolver = resolverOf(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    });
    const err = await choosePlugin(resolver, builtin, request).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'ERROR_SERVICE_UNAVAILABLE' });
    expect(String((err as Error).message)).not.toContain('ECONNREFUSED');
  });
});

describe('resolveRequestOf (upstream\'s upgrade_mode)', () => {
  const named = { domainId: 'domain-a', pluginId: 'plugin-x' };

  it('AUTO, NONE and no mode at all ask for the newest version, whatever the version says', () => {
    for (const upgradeMode of ['AUTO', 'NONE', undefined, null, '']) {
      expect(resolveRequestOf({ ...named, version: '1.0.0', upgradeMode })).toEqual({ ...named, version: '', upgradeMode: 'AUTO' });
      expect(resolveRequestOf({ ...named, upgradeMode })).toEqual({ ...named, version: '', upgradeMode: 'AUTO' });
      expect(upgradeModeOf(upgradeMode)).toBe('AUTO');
    }
  });

  it('MANUAL asks for exactly its version', () => {
    expect(resolveRequestOf({ ...named, version: '1.0.0', upgradeMode: 'MANUAL' })).toEqual({ ...named, version: '1.0.0', upgradeMode: 'MANUAL' });
    expect(upgradeModeOf('MANUAL')).toBe('MANUAL');
  });

  it('MANUAL without a version is a 400 naming the version field', () => {
    for (const version of [undefined, null, '']) {
      expect(() => resolveRequestOf({ ...named, version, upgradeMode: 'MANUAL' })).toThrow(expect.objectContaining({ status: 400, code: 'ERROR_REQUIRED_PARAMETER', details: { key: 'plugin_info.version' } }));
    }
    expect(() => resolveRequestOf({ ...named, upgradeMode: 'MANUAL' }, 'version')).toThrow(expect.objectContaining({ details: { key: 'version' } }));
  });

  it('is what choosePlugin resolves: MANUAL the version asked for, AUTO the newest', async () => {
    const resolver = resolverOf(async () => [
      { version: '1.0.0', endpoint: 'grpc://127.0.0.1:50051', is_public: false },
      { version: '1.1.0', endpoint: 'grpc://127.0.0.1:50052', is_public: false },
    ]);
    await expect(choosePlugin(resolver, undefined, resolveRequestOf({ ...named, version: '1.0.0', upgradeMode: 'MANUAL' }))).resolves.toMatchObject({ version: '1.0.0' });
    await expect(choosePlugin(resolver, undefined, resolveRequestOf({ ...named, version: '1.0.0', upgradeMode: 'NONE' }))).resolves.toMatchObject({ version: '1.1.0' });
  });
});
