import { ApiError, errors, isApiError } from './index';

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
