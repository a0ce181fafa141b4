import { ApiError } from '@platform/errors';

/** The one code every outbound failure reaches a caller with. */
export const OUTBOUND_REFUSED = 'ERROR_OUTBOUND_REFUSED';

/**
 * The one message of every outbound failure. It names no address, port, status, error code or byte
 * the target sent: a refused address, a closed port, a reset, a 403, a 404, a timeout and a document
 * that is not what was expected all read the same, so the platform's outbound calls are no oracle.
 */
export const OUTBOUND_REFUSED_MESSAGE = 'The external endpoint could not be used: it is not allowed, cannot be reached, or did not answer as expected.';

const MAX_DETAIL = 500;

/**
 * An outbound call failed (the address guard refused it, the connection failed, the target answered
 * something unusable). The caller's answer, a task's `error_message` and a delivery's error are the
 * uniform message; `detail` (what happened, without secrets: URLs go through `urlForDisplay`) is for
 * the log alone. `details.outboundDetail` carries it to libs/http's error handler, which logs it.
 */
export class OutboundRefused extends ApiError {
  constructor(
    readonly key: string,
    readonly detail: string,
  ) {
    super(400, OUTBOUND_REFUSED, `${OUTBOUND_REFUSED_MESSAGE} (key = ${key})`, { key, outboundDetail: detail.slice(0, MAX_DETAIL) });
    this.name = 'OutboundRefused';
  }
}

export function isOutboundRefused(e: unknown): e is OutboundRefused {
  return e instanceof OutboundRefused;
}

/** A reason for the log that quotes at most a few characters of what a target sent, JSON-escaped. */
export function quoteForLog(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}
