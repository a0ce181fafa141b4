/**
 * The one error type every failure leaves through: `{"error": {"code", "message", "status"}}`.
 * Codes are upstream's (Cloudforet) where it has one; statuses follow its gRPC → HTTP mapping.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toEnvelope() {
    return { error: { code: this.code, message: this.message, status: this.status } };
  }
}

export const errors = {
  requiredParameter: (key: string, reason?: string) =>
    new ApiError(400, 'ERROR_REQUIRED_PARAMETER', `Required parameter. (key = ${key}${reason === undefined ? '' : `, reason = ${reason}`})`, { key }),
  invalidParameter: (key: string, reason: string) =>
    new ApiError(400, 'ERROR_INVALID_PARAMETER', `Invalid parameter. (key = ${key}, reason = ${reason})`, { key }),
  invalidParameterType: (key: string, type: string) =>
    new ApiError(400, 'ERROR_INVALID_PARAMETER_TYPE', `Parameter type is invalid. (key = ${key}, type = ${type})`, { key }),
  invalidArgument: (message: string) => new ApiError(400, 'ERROR_INVALID_ARGUMENT', message),
  badRequest: (code: string, message: string) => new ApiError(400, code, message),
  notFound: (key: string, value: string) => new ApiError(404, 'ERROR_NOT_FOUND', `Resource not found. (${key} = ${value})`, { key }),
  alreadyExists: (key: string, value: string) =>
    new ApiError(409, 'ERROR_ALREADY_EXISTS', `Resource already exists. (${key} = ${value})`, { key }),
  notUnique: (key: string, value: string) => new ApiError(409, 'ERROR_NOT_UNIQUE', `Value is not unique. (${key} = ${value})`, { key }),
  conflict: (code: string, message: string) => new ApiError(409, code, message),
  authenticateFailure: (message = 'Authenticate failure.') => new ApiError(401, 'ERROR_AUTHENTICATE_FAILURE', message),
  permissionDenied: (message = 'Permission denied.') => new ApiError(403, 'ERROR_PERMISSION_DENIED', message),
  forbidden: (code: string, message: string) => new ApiError(403, code, message),
  methodNotAllowed: (method: string) => new ApiError(405, 'ERROR_METHOD_NOT_ALLOWED', `Method not allowed: ${method}. Every operation is POST.`),
  pathNotFound: (path: string) => new ApiError(404, 'ERROR_NOT_FOUND', `No operation at ${path}.`, { key: 'path' }),
  unsupportedMediaType: () => new ApiError(415, 'ERROR_UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.'),
  payloadTooLarge: (limit: string) => new ApiError(413, 'ERROR_PAYLOAD_TOO_LARGE', `Request body is larger than ${limit}.`),
  malformedJson: () => new ApiError(400, 'ERROR_INVALID_JSON', 'Request body is not valid JSON.'),
  /** 429; `retryAfterSeconds` becomes the answer's Retry-After. */
  tooManyRequests: (code: string, message: string, retryAfterSeconds?: number) =>
    new ApiError(429, code, message, retryAfterSeconds === undefined ? undefined : { retryAfterSeconds }),
  unavailable: (message = 'Service unavailable.') => new ApiError(503, 'ERROR_SERVICE_UNAVAILABLE', message),
  unknown: () => new ApiError(500, 'ERROR_UNKNOWN', 'Internal error.'),

  // Domain rules. Upstream answers each with its own code and a 400 (INVALID_ARGUMENT or
  // FAILED_PRECONDITION over gRPC); the helper names the meaning, the caller the upstream code.
  /** 400: the record's state (disabled, deleted, not running, no plugin, no remote) does not allow the operation. */
  wrongState: (code: string, message: string) => new ApiError(400, code, message),
  /** 400: a rule of the domain forbids the operation (related records, the last admin, one's own binding, a cycle). */
  notAllowed: (code: string, message: string) => new ApiError(400, code, message),
  /** 400: the record would repeat one that exists, where upstream answers ERROR_DUPLICATED_* rather than 409. */
  duplicated: (code: string, message: string) => new ApiError(400, code, message),
  /** 401: the credentials of a token issue were refused for a named reason (blocked, MFA required, wrong code). */
  unauthenticated: (code: string, message: string) => new ApiError(401, code, message),
  /** 400: the JSON Schema at `key` is not one. */
  invalidSchema: (key: string, reason: string) => new ApiError(400, 'ERROR_INVALID_SCHEMA', `Invalid JSON Schema. (key = ${key}, reason = ${reason})`, { key }),

  // Plugins.
  /** 400: the plugin has no such version. */
  invalidPluginVersion: (key: string, message: string) => new ApiError(400, 'ERROR_INVALID_PLUGIN_VERSION', message, { key }),
  /** 400: the plugin's verify refused its options or secret. */
  verifyPluginFailure: (reason: string) => new ApiError(400, 'ERROR_VERIFY_PLUGIN_FAILURE', `Fail to verify plugin: ${reason}`),
  /** 400: a plugin refused the request's options with its own code. */
  pluginRejected: (code: string, message: string) => new ApiError(400, code, message),
};

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
