import { ApiError } from '@platform/errors';

export async function expect400(p: Promise<unknown> | (() => unknown), key: string, code = 'ERROR_INVALID_PARAMETER'): Promise<ApiError> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ApiError);
  const e = err as ApiError;
  expect({ status: e.status, code: e.code, key: e.details?.key }).toEqual({ status: 400, code, key });
  return e;
}
