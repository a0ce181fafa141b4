import { ApiError } from './errors';

/**
 * A plugin's failure as our envelope, never a 500 (docs/decisions/plugins.md, "Errors"). A plugin
 * (upstream's python-core, or our plugin kit) ends a failed call with a gRPC status and the details
 * `ERROR_X: message`; the code travels as it is (a 4xx for the statuses that are the request's fault),
 * the status maps as upstream's gRPC → HTTP table does, with these exceptions:
 * - UNAVAILABLE, DEADLINE_EXCEEDED and CANCELLED are the plugin being down or slow: 503
 *   ERROR_PLUGIN_UNAVAILABLE, retryable, whatever code the text names;
 * - UNAUTHENTICATED is the plugin refusing the credentials it was given (secret_data): 400, not 401,
 *   which would tell the platform's own caller that their token is bad;
 * - INTERNAL, UNKNOWN, DATA_LOSS (the plugin failed) are 502, UNIMPLEMENTED (the plugin does not do
 *   what it was registered for) 400.
 * The message must already be redacted (libs/plugin does it); it is cut to `MAX_MESSAGE` characters.
 */
export type GrpcStatusName =
  | 'OK' | 'CANCELLED' | 'UNKNOWN' | 'INVALID_ARGUMENT' | 'DEADLINE_EXCEEDED' | 'NOT_FOUND' | 'ALREADY_EXISTS' | 'PERMISSION_DENIED'
  | 'RESOURCE_EXHAUSTED' | 'FAILED_PRECONDITION' | 'ABORTED' | 'OUT_OF_RANGE' | 'UNIMPLEMENTED' | 'INTERNAL' | 'UNAVAILABLE'
  | 'DATA_LOSS' | 'UNAUTHENTICATED';

const MAX_MESSAGE = 1000;
const CODE = /^(ERROR_[A-Z0-9_]{1,64})\s*:\s*([\s\S]*)$/;

const HTTP: Record<GrpcStatusName, number> = {
  OK: 502, // a failure reported with OK is itself a broken answer
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 400,
  UNIMPLEMENTED: 400,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 502,
  UNKNOWN: 502,
  DATA_LOSS: 502,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 503,
  CANCELLED: 503,
};

/** Fallback codes when the plugin's text names none. */
const FALLBACK: Partial<Record<GrpcStatusName, string>> = {
  INVALID_ARGUMENT: 'ERROR_INVALID_ARGUMENT',
  FAILED_PRECONDITION: 'ERROR_INVALID_ARGUMENT',
  OUT_OF_RANGE: 'ERROR_INVALID_ARGUMENT',
  UNAUTHENTICATED: 'ERROR_PLUGIN_AUTHENTICATION_FAILURE',
  UNIMPLEMENTED: 'ERROR_PLUGIN_UNIMPLEMENTED',
  PERMISSION_DENIED: 'ERROR_PERMISSION_DENIED',
  NOT_FOUND: 'ERROR_NOT_FOUND',
  ALREADY_EXISTS: 'ERROR_ALREADY_EXISTS',
  ABORTED: 'ERROR_PLUGIN_FAILURE',
  RESOURCE_EXHAUSTED: 'ERROR_PLUGIN_RESOURCE_EXHAUSTED',
};

export const PLUGIN_UNAVAILABLE = 'ERROR_PLUGIN_UNAVAILABLE';
/** Seconds a caller is told to wait (Retry-After) after a plugin was unavailable. */
const RETRY_AFTER_SECONDS = 5;

const cut = (text: string, max = MAX_MESSAGE): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The plugin's `ERROR_X: message`, or no code. */
export function parsePluginDetails(details: string): { code?: string; message: string } {
  const m = CODE.exec(details.slice(0, MAX_MESSAGE * 4));
  return m ? { code: m[1], message: m[2].trim() || details } : { message: details };
}

export interface PluginErrorDetails extends Record<string, unknown> {
  grpcStatus: GrpcStatusName;
  /** The failure may pass: a retry later can succeed (the plugin was down or slow). */
  retryable: boolean;
  retryAfterSeconds?: number;
}

/**
 * The envelope of a plugin's failed call: `status` is the gRPC status name, `details` its text
 * (redacted by the caller). `context` (e.g. "plugin-aws-cost" or the method) prefixes the message.
 */
export function pluginError(status: GrpcStatusName, details: string, context?: string): ApiError {
  const http = HTTP[status] ?? 502;
  const prefix = context ? `${context}: ` : '';
  if (http === 503) {
    return new ApiError(503, PLUGIN_UNAVAILABLE, cut(`${prefix}plugin unavailable (${status}): ${details || 'no details'}`), {
      grpcStatus: status,
      retryable: true,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
    } satisfies PluginErrorDetails);
  }
  const parsed = parsePluginDetails(details);
  const code = parsed.code ?? FALLBACK[status] ?? 'ERROR_PLUGIN_FAILURE';
  const message = cut(`${prefix}${parsed.message || code}`);
  return new ApiError(http, code, message, { grpcStatus: status, retryable: false } satisfies PluginErrorDetails);
}

/** Failures of a plugin call found on our side (not a status the plugin sent). */
export const pluginErrors = {
  /** The plugin could not be reached, or did not answer within the deadline. */
  unavailable: (message: string) =>
    new ApiError(503, PLUGIN_UNAVAILABLE, cut(message), { grpcStatus: 'UNAVAILABLE', retryable: true, retryAfterSeconds: RETRY_AFTER_SECONDS } satisfies PluginErrorDetails),
  /** The plugin's answer is not a message of the protocol (garbage, a wrong type, too deep). */
  invalidResponse: (message: string) =>
    new ApiError(502, 'ERROR_PLUGIN_INVALID_RESPONSE', cut(message), { grpcStatus: 'INTERNAL', retryable: false } satisfies PluginErrorDetails),
  /** The plugin's answer is larger than a message may be, or a stream went past its bounds. */
  responseTooLarge: (message: string) =>
    new ApiError(502, 'ERROR_PLUGIN_RESPONSE_TOO_LARGE', cut(message), { grpcStatus: 'RESOURCE_EXHAUSTED', retryable: false } satisfies PluginErrorDetails),
  /** What we would send is larger than a message to a plugin may be. */
  requestTooLarge: (message: string) =>
    new ApiError(413, 'ERROR_PLUGIN_REQUEST_TOO_LARGE', cut(message), { grpcStatus: 'RESOURCE_EXHAUSTED', retryable: false } satisfies PluginErrorDetails),
  /** The endpoint is not `grpc://host:port` or `grpcs://host:port`. */
  invalidEndpoint: (reason: string) => new ApiError(400, 'ERROR_INVALID_PLUGIN_ENDPOINT', cut(`Invalid plugin endpoint: ${reason}`)),
};

/** Every code this module gives itself (a plugin's own `ERROR_X` codes come in addition), by status. */
export const PLUGIN_ERROR_CODES: Record<number, string[]> = {
  400: ['ERROR_INVALID_ARGUMENT', 'ERROR_PLUGIN_AUTHENTICATION_FAILURE', 'ERROR_PLUGIN_UNIMPLEMENTED', 'ERROR_INVALID_PLUGIN_ENDPOINT', 'ERROR_INVALID_PARAMETER'],
  403: ['ERROR_PERMISSION_DENIED'],
  404: ['ERROR_NOT_FOUND'],
  409: ['ERROR_ALREADY_EXISTS', 'ERROR_PLUGIN_FAILURE'],
  413: ['ERROR_PLUGIN_REQUEST_TOO_LARGE'],
  429: ['ERROR_PLUGIN_RESOURCE_EXHAUSTED'],
  502: ['ERROR_PLUGIN_FAILURE', 'ERROR_PLUGIN_INVALID_RESPONSE', 'ERROR_PLUGIN_RESPONSE_TOO_LARGE'],
  503: [PLUGIN_UNAVAILABLE],
};
