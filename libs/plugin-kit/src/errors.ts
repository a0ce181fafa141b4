import { status as Status } from '@grpc/grpc-js';

/**
 * A plugin's refusal, as upstream's python-core sends it: a gRPC status and the details
 * `ERROR_X: message`. Throw one from a handler; anything else thrown leaves as INTERNAL
 * `ERROR_UNKNOWN: <its message>`, as upstream does.
 */
export class PluginFailure extends Error {
  constructor(
    readonly status: Status,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PluginFailure';
  }

  /** The status details, `ERROR_X: message`. */
  get details(): string {
    return `${this.code}: ${this.message}`;
  }
}

/** Upstream's common errors (python-core spaceone.core.error), same codes, statuses and texts. */
export const fail = {
  requiredParameter: (key: string) => new PluginFailure(Status.INVALID_ARGUMENT, 'ERROR_REQUIRED_PARAMETER', `Required parameter. (key = ${key})`),
  invalidParameter: (key: string, reason: string) =>
    new PluginFailure(Status.INVALID_ARGUMENT, 'ERROR_INVALID_PARAMETER', `Parameter is invalid. (key = ${key}, reason = ${reason})`),
  invalidParameterType: (key: string, type: string) =>
    new PluginFailure(Status.INVALID_ARGUMENT, 'ERROR_INVALID_PARAMETER_TYPE', `Parameter type is invalid. (key = ${key}, type = ${type})`),
  invalidArgument: (message = 'Argument is invalid.') => new PluginFailure(Status.INVALID_ARGUMENT, 'ERROR_INVALID_ARGUMENT', message),
  notFound: (key: string, value: string) =>
    new PluginFailure(Status.NOT_FOUND, 'ERROR_NOT_FOUND', `Resource cannot be found or access is denied. (${key} = ${value})`),
  authenticateFailure: (message: string) => new PluginFailure(Status.UNAUTHENTICATED, 'ERROR_AUTHENTICATE_FAILURE', `Authenticate failure. (message = ${message})`),
  permissionDenied: () => new PluginFailure(Status.PERMISSION_DENIED, 'ERROR_PERMISSION_DENIED', 'Permission denied.'),
  notImplemented: () => new PluginFailure(Status.UNIMPLEMENTED, 'ERROR_NOT_IMPLEMENTED', 'Not implemented.'),
  unknown: (message: string) => new PluginFailure(Status.INTERNAL, 'ERROR_UNKNOWN', message),
  /** Any code: `fail.custom(Status.INVALID_ARGUMENT, 'ERROR_INVALID_URL', 'base_url is not a URL.')`. */
  custom: (status: Status, code: string, message: string) => new PluginFailure(status, code, message),
};
