import { compareVersions, EndpointTurns, pickEndpoint } from './versions';

describe('plugin version order (AUTO picks the newest)', () => {
  it('orders numerically, pre-releases before their release, words below numbers', () => {
    const shuffled = ['1.10.0', 'latest', '1.2.0', '1.10.0-rc.1', '1.10.0-rc.10', '1.10.0-rc.2', '1.9', 'v1.9.1', '1.10.0.dev5', '1.10.0-alpha', '2.0.0+build.7', '10.0.0', '99999999999999999999.0.0'];
    expect([...shuffled].sort(compareVersions)).toEqual([
      'latest',
      '1.2.0',
      '1.9',
      'v1.9.1',
      '1.10.0-alpha',
      '1.10.0.dev5', // pre-release identifiers in ASCII order: alpha < dev5 < rc
      '1.10.0-rc.1',
      '1.10.0-rc.2',
      '1.10.0-rc.10',
      '1.10.0',
      '2.0.0+build.7',
      '10.0.0',
      '99999999999999999999.0.0',
    ]);
  });

  it('is total and stable: equal precedence orders by text, only the same text is 0', () => {
    expect(compareVersions('1.0', '1.0.0')).toBe(-1);
    expect(compareVersions('1.0.0', '1.0')).toBe(1);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0+a', '1.0.0+b')).toBe(-1);
  });

  it('picks: AUTO the newest, MANUAL the asked one, the domain’s own over a public one', () => {
    const rows = [
      { version: '1.0.0', endpoint: 'grpc://pub-1:1', is_public: true },
      { version: '1.0.0', endpoint: 'grpc://own-1:1', is_public: false },
      { version: '1.1.0', endpoint: 'grpc://pub-11:1', is_public: true },
    ];
    expect(pickEndpoint(rows, '1.0.0', 'AUTO')).toEqual({ endpoint: 'grpc://pub-11:1', endpoints: ['grpc://pub-11:1'], version: '1.1.0', updated_version: '1.1.0' });
    expect(pickEndpoint(rows, '1.0.0', 'MANUAL')).toEqual({ endpoint: 'grpc://own-1:1', endpoints: ['grpc://own-1:1'], version: '1.0.0', updated_version: '1.0.0' });
    expect(pickEndpoint(rows, '2.0.0', 'MANUAL')).toBeUndefined();
    expect(pickEndpoint([], '', 'AUTO')).toBeUndefined();
  });
});

describe("a version's endpoints (upstream's round robin)", () => {
  it('pickEndpoint answers the endpoints list, else the endpoint alone; strings only', () => {
    const one = pickEndpoint([{ version: '1.0.0', endpoint: 'grpc://a:1', is_public: false }], '', 'AUTO');
    expect(one).toMatchObject({ endpoint: 'grpc://a:1', endpoints: ['grpc://a:1'] });
    const many = pickEndpoint([{ version: '1.0.0', endpoint: 'grpc://a:1', endpoints: ['grpc://b:1', 7, '', 'grpc://c:1'], is_public: false }], '', 'AUTO');
    expect(many).toMatchObject({ endpoint: 'grpc://b:1', endpoints: ['grpc://b:1', 'grpc://c:1'] });
  });

  it('EndpointTurns takes them in turn per key, and forgets the oldest key past its bound', () => {
    const turns = new EndpointTurns(2);
    const list = ['x', 'y', 'z'];
    expect([turns.take('k1', list), turns.take('k1', list), turns.take('k1', list), turns.take('k1', list)]).toEqual(['x', 'y', 'z', 'x']);
    expect(turns.take('k2', list)).toBe('x');
    expect(turns.take('k3', list)).toBe('x'); // k1 is forgotten now
    expect(turns.take('k1', list)).toBe('x');
    expect(turns.take('solo', ['only'])).toBe('only');
  });
});
