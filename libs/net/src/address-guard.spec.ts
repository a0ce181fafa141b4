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
});
