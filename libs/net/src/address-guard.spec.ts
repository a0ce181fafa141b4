import { addressAllowed, canonicalHost, isNeverAllowed, isPrivateAddress, resolveAllowedAddress, type Resolver } from './address-guard';
import { LOOPBACK_ONLY, NO_PRIVATE_DESTINATIONS, parseOutboundAllowList } from './policy';
import { OUTBOUND_REFUSED, OUTBOUND_REFUSED_MESSAGE } from './refusal';

/** A resolver that answers from a table and never asks DNS (no packet leaves the machine). */
function table(answers: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

const refused = { code: OUTBOUND_REFUSED, status: 400 };

describe('address guard', () => {
  it.each([
    '127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', '::ffff:127.0.0.1',
    '::ffff:7f00:1', '64:ff9b::a00:1', '2002:7f00:1::1', 'not-an-ip',
  ])('%s is private or reserved', (ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (ip) =>
    expect(isPrivateAddress(ip)).toBe(false),
  );

  it('refuses names resolving to loopback unless the allow-list names loopback, without saying the address', async () => {
    const e = await resolveAllowedAddress('localhost', NO_PRIVATE_DESTINATIONS, 'k').catch((err: Error) => err);
    expect(e).toMatchObject(refused);
    expect((e as Error).message).toBe(`${OUTBOUND_REFUSED_MESSAGE} (key = k)`);
    expect((e as Error).message).toContain('not allowed');
    expect((e as Error).message).not.toMatch(/127\.0\.0\.1|::1|localhost|resolves/);
    await expect(resolveAllowedAddress('localhost', LOOPBACK_ONLY, 'k')).resolves.toMatchObject({ address: expect.any(String) });
    // IPv6 loopback is loopback (not the IPv4-compatible ::0.0.0.1), allowed when listed
    await expect(resolveAllowedAddress('[::1]', LOOPBACK_ONLY, 'k')).resolves.toEqual({ address: '::1', family: 6 });
    await expect(resolveAllowedAddress('::1', NO_PRIVATE_DESTINATIONS, 'k')).rejects.toMatchObject(refused);
    await expect(resolveAllowedAddress('8.8.8.8', NO_PRIVATE_DESTINATIONS, 'k')).resolves.toEqual({ address: '8.8.8.8', family: 4 });
    // a name that does not resolve reads exactly like a refused one
    const unknown = await resolveAllowedAddress('nothing.invalid', LOOPBACK_ONLY, 'k', table({})).catch((err: Error) => err);
    expect(unknown).toMatchObject({ ...refused, message: (e as Error).message });
  });

  // issue #23: every spelling of a private IPv4 address inside IPv6 is judged by that address
  it.each([
    '::7f00:1', '::127.0.0.1', '::a00:1', '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '0:0:0:0:0:ffff:7f00:1', '::0:ffff:7f00:1',
    '64:ff9b::127.0.0.1', '64:ff9b:1::808:808', '2002:a9fe:a9fe::1', '::ffff:169.254.169.254', 'fe80::1%eth0', '::ffff:127.0.0.1%1',
  ])('%s (IPv4 inside IPv6, zone ids, local NAT64) is private or reserved', (ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each(['::808:808', '::ffff:0:808:808', '64:ff9b::8.8.8.8'])('%s (a public IPv4 address inside IPv6) is public', (ip) => expect(isPrivateAddress(ip)).toBe(false));

  it('refuses the numeric spellings of loopback (decimal, hex, octal, short) unless loopback is listed', async () => {
    for (const host of ['2130706433', '0x7f.1', '0x7f000001', '0177.0.0.1', '127.1', '017700000001']) {
      await expect(resolveAllowedAddress(host, NO_PRIVATE_DESTINATIONS, 'k', table({}))).rejects.toMatchObject(refused);
      await expect(resolveAllowedAddress(host, LOOPBACK_ONLY, 'k', table({}))).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    }
  });

  // issue #27: link-local, metadata and the unspecified address, whatever the allow-list says
  const everything = parseOutboundAllowList('0.0.0.0/0,::/0,metadata.google.internal,*.internal');
  const metadataSpellings = [
    '169.254.169.254', '0xa9fea9fe', '0xA9FEA9FE', '2852039166', '0251.0376.0251.0376', '0251.254.169.254', '169.254.43518', '169.16689662',
    '0xa9.0xfe.0xa9.0xfe', '[::ffff:a9fe:a9fe]', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '0:0:0:0:0:ffff:a9fe:a9fe', '::a9fe:a9fe',
    '::ffff:0:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::', 'fd00:ec2::254', '[fd00:ec2::254]', 'FD00:EC2:0:0:0:0:0:254',
    'fe80::1', 'fe80::a9fe:a9fe%eth0', 'febf::1', '169.254.0.1', '0.0.0.0', '0', '0x0', '::', '[::]', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0',
  ];
  it.each(metadataSpellings)('%s is refused even when the allow-list names every network', async (host) => {
    await expect(resolveAllowedAddress(host, everything, 'k', table({}))).rejects.toMatchObject(refused);
  });

  it('refuses a listed name that resolves to metadata, link-local or unspecified (the name is trusted, not those addresses)', async () => {
    const resolve = table({
      'metadata.google.internal': ['169.254.169.254'],
      'keycloak.internal': ['10.1.2.3'],
      'v6.internal': ['fd00:ec2::254'],
      'zero.internal': ['0.0.0.0'],
    });
    for (const host of ['metadata.google.internal', 'v6.internal', 'zero.internal']) {
      await expect(resolveAllowedAddress(host, everything, 'k', resolve)).rejects.toMatchObject(refused);
    }
    await expect(resolveAllowedAddress('keycloak.internal', everything, 'k', resolve)).resolves.toEqual({ address: '10.1.2.3', family: 4 });
    expect(isNeverAllowed('169.254.169.254') && isNeverAllowed('::ffff:a9fe:a9fe') && isNeverAllowed('fd00:ec2::254')).toBe(true);
    expect(isNeverAllowed('10.0.0.1') || isNeverAllowed('127.0.0.1') || isNeverAllowed('8.8.8.8') || isNeverAllowed('::1')).toBe(false);
    expect(isNeverAllowed('::') && isNeverAllowed('0:0:0:0:0:0:0:0')).toBe(true);
  });

  it('allows a private destination only by its listed network or its listed host name', async () => {
    const policy = parseOutboundAllowList('10.0.0.0/8, keycloak.internal *.svc.cluster.local');
    const resolve = table({
      'keycloak.internal': ['192.168.5.5'],
      'prom.mon.svc.cluster.local': ['172.20.0.9'],
      'other.internal': ['192.168.5.5'],
      'ten.example': ['10.9.9.9'],
      'svc.cluster.local': ['172.20.0.1'],
    });
    await expect(resolveAllowedAddress('KeyCloak.Internal.', policy, 'k', resolve)).resolves.toMatchObject({ address: '192.168.5.5' });
    await expect(resolveAllowedAddress('prom.mon.svc.cluster.local', policy, 'k', resolve)).resolves.toMatchObject({ address: '172.20.0.9' });
    await expect(resolveAllowedAddress('ten.example', policy, 'k', resolve)).resolves.toMatchObject({ address: '10.9.9.9' });
    await expect(resolveAllowedAddress('10.2.3.4', policy, 'k', resolve)).resolves.toMatchObject({ address: '10.2.3.4' });
    await expect(resolveAllowedAddress('[::ffff:10.2.3.4]', policy, 'k', resolve)).resolves.toMatchObject({ address: '::ffff:a02:304' });
    for (const host of ['other.internal', 'svc.cluster.local', '192.168.5.5', '127.0.0.1', 'localhost']) {
      await expect(resolveAllowedAddress(host, policy, 'k', resolve)).rejects.toMatchObject(refused);
    }
    expect(addressAllowed(policy, 'keycloak.internal', '169.254.169.254')).toBe(false);
  });

  it('refuses a name any of whose addresses is refused (DNS rebinding, localtest.me-style names), through the resolver seam', async () => {
    const resolve = table({
      'localtest.me': ['127.0.0.1'],
      'rebind.example': ['93.184.216.34', '127.0.0.1'],
      'v6.example': ['2606:4700:4700::1111', '::ffff:7f00:1'],
      'metadata.example': ['169.254.169.254'],
      'public.example': ['93.184.216.34'],
    });
    for (const host of ['localtest.me', 'rebind.example', 'v6.example', 'metadata.example']) {
      await expect(resolveAllowedAddress(host, NO_PRIVATE_DESTINATIONS, 'k', resolve)).rejects.toMatchObject(refused);
    }
    await expect(resolveAllowedAddress('public.example', NO_PRIVATE_DESTINATIONS, 'k', resolve)).resolves.toEqual({ address: '93.184.216.34', family: 4 });
    await expect(resolveAllowedAddress('localtest.me', LOOPBACK_ONLY, 'k', resolve)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(resolveAllowedAddress('metadata.example', LOOPBACK_ONLY, 'k', resolve)).rejects.toMatchObject(refused);
  });

  it('reads a host as the URL parser does', () => {
    expect(['0xa9fea9fe', '2852039166', '0251.0376.0251.0376', '169.254.43518', '169.16689662'].map(canonicalHost)).toEqual(Array(5).fill('169.254.169.254'));
    expect(canonicalHost('[::FFFF:A9FE:A9FE]')).toBe('::ffff:a9fe:a9fe');
    expect(canonicalHost('Example.COM')).toBe('example.com');
    expect(canonicalHost('0:0:0:0:0:0:0:1')).toBe('::1');
  });
});
