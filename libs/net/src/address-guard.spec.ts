import { isPrivateAddress, resolveAllowedAddress } from './address-guard';

describe('address guard', () => {
  it.each([
    '127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', '::ffff:127.0.0.1',
    '::ffff:7f00:1', '64:ff9b::a00:1', '2002:7f00:1::1', 'not-an-ip',
  ])('%s is private or reserved', (ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (ip) =>
    expect(isPrivateAddress(ip)).toBe(false),
  );

  it('refuses names resolving to loopback unless allowed', async () => {
    await expect(resolveAllowedAddress('localhost', false, 'k')).rejects.toMatchObject({ code: 'ERROR_ADDRESS_NOT_ALLOWED', status: 400 });
    await expect(resolveAllowedAddress('localhost', true, 'k')).resolves.toMatchObject({ address: expect.any(String) });
    await expect(resolveAllowedAddress('8.8.8.8', false, 'k')).resolves.toEqual({ address: '8.8.8.8', family: 4 });
    await expect(resolveAllowedAddress('nothing.invalid', true, 'k')).rejects.toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
  });

  // issue #23: every spelling of a private IPv4 address inside IPv6 is judged by that address
  it.each([
    '::7f00:1', '::127.0.0.1', '::a00:1', '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '0:0:0:0:0:ffff:7f00:1', '::0:ffff:7f00:1',
    '64:ff9b::127.0.0.1', '64:ff9b:1::808:808', '2002:a9fe:a9fe::1', '::ffff:169.254.169.254', 'fe80::1%eth0', '::ffff:127.0.0.1%1',
  ])('%s (IPv4 inside IPv6, zone ids, local NAT64) is private or reserved', (ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each(['::808:808', '::ffff:0:808:808', '64:ff9b::8.8.8.8'])('%s (a public IPv4 address inside IPv6) is public', (ip) => expect(isPrivateAddress(ip)).toBe(false));

  it('refuses the numeric spellings of loopback the resolver accepts (decimal, hex, octal, short)', async () => {
    for (const host of ['2130706433', '0x7f.1', '0x7f000001', '0177.0.0.1', '127.1', '0', '017700000001']) {
      await expect(resolveAllowedAddress(host, false, 'k')).rejects.toMatchObject({ code: 'ERROR_ADDRESS_NOT_ALLOWED', status: 400 });
    }
  });

  it('refuses a name any of whose addresses is private (DNS rebinding, localtest.me-style names), through the resolver seam', async () => {
    const answers: Record<string, string[]> = {
      'localtest.me': ['127.0.0.1'],
      'rebind.example': ['93.184.216.34', '127.0.0.1'],
      'v6.example': ['2606:4700:4700::1111', '::ffff:7f00:1'],
      'metadata.example': ['169.254.169.254'],
      'public.example': ['93.184.216.34'],
    };
    const resolve = async (host: string) => answers[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    for (const host of ['localtest.me', 'rebind.example', 'v6.example', 'metadata.example']) {
      await expect(resolveAllowedAddress(host, false, 'k', resolve)).rejects.toMatchObject({ code: 'ERROR_ADDRESS_NOT_ALLOWED' });
    }
    await expect(resolveAllowedAddress('public.example', false, 'k', resolve)).resolves.toEqual({ address: '93.184.216.34', family: 4 });
    await expect(resolveAllowedAddress('localtest.me', true, 'k', resolve)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });
});
