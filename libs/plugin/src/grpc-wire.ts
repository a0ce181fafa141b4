/**
 * gRPC's wire format over HTTP/2, both sides of it (the platform's client, libs/plugin h2.ts, and the
 * kit's server, libs/plugin-kit h2-server.ts): status codes, the 5-byte message prefix, the
 * grpc-timeout header and the percent-encoded grpc-message.
 */

/** gRPC's status codes, by number (the names of @platform/errors' GrpcStatusName). */
export const GRPC_STATUS = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
] as const;

/** gRPC's status codes, by name. */
export const GRPC = Object.fromEntries(GRPC_STATUS.map((name, code) => [name, code])) as { readonly [K in (typeof GRPC_STATUS)[number]]: number };

/** One message with gRPC's 5-byte prefix (not compressed, big-endian length). */
export function grpcFrame(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** The grpc-timeout header for `ms`: at most 8 digits, in the finest unit that fits. */
export function grpcTimeout(ms: number): string {
  const m = Math.max(1, Math.ceil(ms));
  if (m < 1e8) return `${m}m`;
  const s = Math.ceil(m / 1000);
  return s < 1e8 ? `${s}S` : `${Math.min(99_999_999, Math.ceil(s / 3600))}H`;
}

const UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** The grpc-timeout header in ms (at most 8 digits and a unit), or undefined when absent or malformed. */
export function parseGrpcTimeout(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(v);
  return m ? Number(m[1]) * UNITS[m[2]] : undefined;
}

/** grpc-message is percent-encoded: bytes outside 0x20–0x7E, and '%', as %XX of their UTF-8. */
export function percentEncode(s: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(s)) return s;
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) out += b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** A received grpc-message, percent-decoded; a malformed one is kept as sent. */
export function percentDecode(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') return '';
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
