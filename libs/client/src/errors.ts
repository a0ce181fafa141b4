import type { ErrorEnvelope } from './types';

/** An answer with the error envelope (any 4xx/5xx): its code, message and status, and the whole envelope. */
export class PlatformApiError extends Error {
  override readonly name = 'PlatformApiError';
  readonly code: string;
  readonly status: number;

  constructor(
    readonly envelope: ErrorEnvelope,
    /** The operation path (or URL) that answered it. */
    readonly path: string,
    /** The request id the platform answered with (`x-request-id`), for its logs. */
    readonly requestId?: string,
  ) {
    super(`${envelope.error.code}: ${envelope.error.message}`);
    this.code = envelope.error.code;
    this.status = envelope.error.status;
  }
}

/** No answer at all (the endpoint is unreachable), or one that is not the platform's JSON. */
export class PlatformConnectionError extends Error {
  override readonly name = 'PlatformConnectionError';
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isPlatformApiError = (e: unknown): e is PlatformApiError => e instanceof PlatformApiError;
