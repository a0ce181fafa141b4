import { hostIsListed, LOOPBACK_ONLY, outboundPolicyFromEnv, parseOutboundAllowList } from './policy';

describe('outbound allow-list', () => {
  it('reads CIDRs, addresses, host names and *.suffix names, separated by commas or spaces', () => {
    const p = parseOutboundAllowList(' 10.0.0.0/8, fd00::/8 192.168.1.7,keycloak.internal,*.svc.cluster.local ');
    expect([...p.hosts]).toEqual(['keycloak.internal']);
    expect(p.suffixes).toEqual(['.svc.cluster.local']);
    expect(p.nets.check('10.200.0.1', 'ipv4') && p.nets.check('fd12::1', 'ipv6') && p.nets.check('192.168.1.7', 'ipv4')).toBe(true);
    expect(p.nets.check('192.168.1.8', 'ipv4')).toBe(false);
    expect(hostIsListed(p, 'KEYCLOAK.internal.')).toBe(true);
    expect(hostIsListed(p, 'a.svc.cluster.local') && !hostIsListed(p, 'svc.cluster.local') && !hostIsListed(p, 'evilsvc.cluster.local')).toBe(true);
    expect(hostIsListed(LOOPBACK_ONLY, '127.0.0.1') && hostIsListed(LOOPBACK_ONLY, '[::1]') && !hostIsListed(LOOPBACK_ONLY, 'localhost')).toBe(true);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/8/1', '300.1.1.1', 'key cloak$', 'a..b', '::1/129', '10.0.0.0/x', '*'])('refuses the malformed entry %s, naming it', (entry) => {
    expect(() => parseOutboundAllowList(entry)).toThrow(/OUTBOUND_ALLOW_PRIVATE/);
  });

  it.each(['ALLOW_PRIVATE_URLS', 'SCHEMA_SYNC_ALLOW_PRIVATE_HOSTS', 'STORAGE_ALLOW_PRIVATE_HOSTS'])(
    'a process given the legacy switch %s stops with a message naming its replacement (true or false: nothing is silently ignored)',
    (name) => {
      for (const value of ['true', 'false']) {
        expect(() => outboundPolicyFromEnv({ [name]: value, OUTBOUND_ALLOW_PRIVATE: '127.0.0.1' })).toThrow(
          new RegExp(`${name} is no longer supported: .*OUTBOUND_ALLOW_PRIVATE`),
        );
      }
    },
  );

  it('is empty (no private destination) when OUTBOUND_ALLOW_PRIVATE is unset', () => {
    const p = outboundPolicyFromEnv({});
    expect(p.entries).toEqual([]);
    expect(p.nets.check('127.0.0.1', 'ipv4')).toBe(false);
  });
});
