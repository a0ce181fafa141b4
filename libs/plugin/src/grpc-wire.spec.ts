import { GRPC, GRPC_STATUS, grpcFrame, grpcTimeout, parseGrpcTimeout, percentDecode, percentEncode } from './grpc-wire';

describe("gRPC's wire format, one copy for the client and the kit's server", () => {
  it('names and numbers the status codes alike', () => {
    expect([GRPC.OK, GRPC.DEADLINE_EXCEEDED, GRPC.UNAVAILABLE, GRPC.UNAUTHENTICATED]).toEqual([0, 4, 14, 16]);
    for (const [code, name] of GRPC_STATUS.entries()) expect(GRPC[name]).toBe(code);
  });

  it('frames a message with the 5-byte prefix', () => {
    expect([...grpcFrame(Buffer.from([7, 8, 9]))]).toEqual([0, 0, 0, 0, 3, 7, 8, 9]);
  });

  it('reads back the timeouts it writes, never shorter; refuses malformed headers', () => {
    for (const ms of [1, 1500, 99_999_999, 100_000_000, 5e12]) expect(parseGrpcTimeout(grpcTimeout(ms))!).toBeGreaterThanOrEqual(ms);
    expect(parseGrpcTimeout('2S')).toBe(2000);
    for (const bad of [undefined, '', '123456789m', '5x', '-1m', '1.5S']) expect(parseGrpcTimeout(bad)).toBeUndefined();
  });

  it('percent-encodes grpc-message and decodes it back; a malformed one is kept as sent', () => {
    for (const s of ['plain text', '100% done', 'naïve — ünïcode ✓', 'line\nbreak\ttab']) {
      const e = percentEncode(s);
      expect(e).toMatch(/^[\x20-\x7e]*$/);
      expect(percentDecode(e)).toBe(s);
    }
    expect(percentDecode('50%')).toBe('50%');
    expect(percentDecode(undefined)).toBe('');
  });
});
