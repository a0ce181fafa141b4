import { compareVersions, pickEndpoint } from './versions';

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
    expect(pickEndpoint(rows, '1.0.0', 'AUTO')).toEqual({ endpoint: 'grpc://pub-11:1', version: '1.1.0', updated_version: '1.1.0' });
    expect(pickEndpoint(rows, '1.0.0', 'MANUAL')).toEqual({ endpoint: 'grpc://own-1:1', version: '1.0.0', updated_version: '1.0.0' });
    expect(pickEndpoint(rows, '2.0.0', 'MANUAL')).toBeUndefined();
    expect(pickEndpoint([], '', 'AUTO')).toBeUndefined();
  });
});
