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
  requiredParameter: (key: string) => new ApiError(400, 'ERROR_REQUIRED_PARAMETER', `Required parameter. (key = ${key})`, { key }),
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
  tooManyRequests: (code: string, message: string) => new ApiError(429, code, message),
  unavailable: (message = 'Service unavailable.') => new ApiError(503, 'ERROR_SERVICE_UNAVAILABLE', message),
  unknown: () => new ApiError(500, 'ERROR_UNKNOWN', 'Internal error.'),
};

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
