import { ApiError, errors, isApiError, pluginError } from './index';

describe('errors', () => {
  it('renders the one envelope', () => {
    const e = errors.notFound('project_group_id', 'pg-1');
    expect(isApiError(e)).toBe(true);
    expect(e.toEnvelope()).toEqual({
      error: { code: 'ERROR_NOT_FOUND', message: 'Resource not found. (project_group_id = pg-1)', status: 404 },
    });
  });

  it('uses upstream codes and statuses', () => {
    expect(errors.requiredParameter('name').status).toBe(400);
    expect(errors.invalidParameter('query.filter.0.key', 'unknown key').code).toBe('ERROR_INVALID_PARAMETER');
    expect(errors.authenticateFailure().status).toBe(401);
    expect(errors.permissionDenied().status).toBe(403);
    expect(errors.alreadyExists('x', 'y').status).toBe(409);
    expect(new ApiError(418, 'X', 'y')).toBeInstanceOf(Error);
  });
});

describe('pluginError', () => {
  it("keeps a plugin's own code with a 4xx status for the statuses that are the request's fault", () => {
    expect(pluginError('INVALID_ARGUMENT', 'ERROR_REQUIRED_PARAMETER: Required parameter. (key = options)').toEnvelope()).toEqual({
      error: { code: 'ERROR_REQUIRED_PARAMETER', message: 'Required parameter. (key = options)', status: 400 },
    });
    expect(pluginError('NOT_FOUND', 'ERROR_NOT_FOUND: gone', 'Cost.get_data').toEnvelope().error).toEqual({ code: 'ERROR_NOT_FOUND', message: 'Cost.get_data: gone', status: 404 });
    expect(pluginError('PERMISSION_DENIED', 'no').status).toBe(403);
    expect(pluginError('ALREADY_EXISTS', 'x').status).toBe(409);
    expect(pluginError('RESOURCE_EXHAUSTED', 'quota').status).toBe(429);
  });

  it('falls back to a code per status when the text names none, and never lets a malformed code through', () => {
    expect(pluginError('INVALID_ARGUMENT', 'bad input').code).toBe('ERROR_INVALID_ARGUMENT');
    expect(pluginError('INVALID_ARGUMENT', 'error_lower: x').code).toBe('ERROR_INVALID_ARGUMENT');
    expect(pluginError('INVALID_ARGUMENT', `ERROR_${'X'.repeat(100)}: x`).code).toBe('ERROR_INVALID_ARGUMENT');
    expect(pluginError('UNIMPLEMENTED', 'Method not found').toEnvelope().error).toMatchObject({ code: 'ERROR_PLUGIN_UNIMPLEMENTED', status: 400 });
  });

  it('UNAUTHENTICATED (the plugin refusing its credentials) is a 400, never a 401 that would look like a bad platform token', () => {
    expect(pluginError('UNAUTHENTICATED', 'ERROR_AUTHENTICATE_FAILURE: Authenticate failure.').status).toBe(400);
  });

  it('down or slow is a retryable 503 ERROR_PLUGIN_UNAVAILABLE; a failing plugin a 502; never a 500', () => {
    for (const s of ['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'CANCELLED'] as const) {
      const e = pluginError(s, 'ERROR_X: connection refused');
      expect([e.status, e.code, e.details?.retryable, e.details?.retryAfterSeconds]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE', true, 5]);
    }
    expect(pluginError('INTERNAL', 'ERROR_UNKNOWN: boom').toEnvelope().error).toEqual({ code: 'ERROR_UNKNOWN', message: 'boom', status: 502 });
    expect(pluginError('UNKNOWN', 'no code').code).toBe('ERROR_PLUGIN_FAILURE');
    const statuses = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED'] as const;
    for (const s of statuses) expect(pluginError(s, 'x').status).not.toBe(500);
  });

  it('bounds the message', () => {
    expect(pluginError('INVALID_ARGUMENT', `ERROR_X: ${'a'.repeat(100_000)}`).message.length).toBeLessThanOrEqual(1000);
  });
});

describe('named helpers', () => {
  it('keep the caller’s upstream code with the status of their meaning', () => {
    const cases: [ApiError, number, string][] = [
      [errors.wrongState('ERROR_WORKSPACE_STATE', 'w'), 400, 'ERROR_WORKSPACE_STATE'],
      [errors.notAllowed('ERROR_RELATED_PROJECT_EXIST', 'p'), 400, 'ERROR_RELATED_PROJECT_EXIST'],
      [errors.duplicated('ERROR_DUPLICATED_ROLE_BINDING', 'd'), 400, 'ERROR_DUPLICATED_ROLE_BINDING'],
      [errors.unauthenticated('ERROR_MFA_REQUIRED', 'm'), 401, 'ERROR_MFA_REQUIRED'],
      [errors.pluginRejected('ERROR_X', 'x'), 400, 'ERROR_X'],
      [errors.verifyPluginFailure('no'), 400, 'ERROR_VERIFY_PLUGIN_FAILURE'],
      [errors.invalidPluginVersion('plugin_info.version', 'v'), 400, 'ERROR_INVALID_PLUGIN_VERSION'],
      [errors.invalidSchema('schema', 'bad'), 400, 'ERROR_INVALID_SCHEMA'],
    ];
    for (const [e, status, code] of cases) expect([e.status, e.code]).toEqual([status, code]);
    expect(errors.verifyPluginFailure('no').message).toBe('Fail to verify plugin: no');
    expect(errors.invalidSchema('schema', 'bad')).toMatchObject({ message: 'Invalid JSON Schema. (key = schema, reason = bad)', details: { key: 'schema' } });
    expect(errors.invalidPluginVersion('k', 'v').details).toEqual({ key: 'k' });
  });

  it('requiredParameter names a reason when given; tooManyRequests carries Retry-After when given', () => {
    expect(errors.requiredParameter('a').message).toBe('Required parameter. (key = a)');
    expect(errors.requiredParameter('a', 'why')).toMatchObject({ message: 'Required parameter. (key = a, reason = why)', details: { key: 'a' } });
    expect(errors.tooManyRequests('ERROR_TOO_MANY_EXPORTS', 'm', 5)).toMatchObject({ status: 429, details: { retryAfterSeconds: 5 } });
    expect(errors.tooManyRequests('ERROR_TOO_MANY_REQUESTS', 'm').details).toBeUndefined();
  });
});
