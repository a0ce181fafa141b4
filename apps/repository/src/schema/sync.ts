import { createHash } from 'node:crypto';
import { ApiError, isApiError } from '@platform/errors';
import type { RepositoryConfig } from '../config';
import { fetchUrl, FetchFailure } from '@platform/net';
import { assertJsonSchema } from './json-schema';
import type { RemoteRepository } from './source';

export function syncFailure(schemaId: string, reason: string): ApiError {
  return new ApiError(400, 'ERROR_SCHEMA_SYNC_FAILED', `Sync of schema ${schemaId} failed: ${reason}`);
}

/**
 * Fetches the remote document of a schema and checks it: a JSON object that is a valid JSON Schema.
 * Answers the schema and its digest; any failure is ERROR_SCHEMA_SYNC_FAILED with the reason (or the
 * guard's ERROR_ADDRESS_NOT_ALLOWED).
 */
export async function fetchRemoteSchema(schemaId: string, remote: RemoteRepository, key: string, config: RepositoryConfig['sync']) {
  let body: Buffer;
  try {
    const res = await fetchUrl(remote.source_url, {
      allowPrivate: config.allowPrivateHosts,
      timeoutMs: config.timeoutMs,
      maxBytes: config.maxBytes,
      maxRedirects: config.maxRedirects,
      key,
      headers: { accept: 'application/schema+json, application/json;q=0.9, */*;q=0.1' },
    });
    if (res.status !== 200) throw new FetchFailure(`${res.url} answered HTTP ${res.status}`);
    body = res.body;
  } catch (e) {
    if (isApiError(e)) throw e;
    throw syncFailure(schemaId, e instanceof FetchFailure ? e.message : String((e as Error)?.message ?? e));
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    throw syncFailure(schemaId, `${remote.source_url} is not JSON`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw syncFailure(schemaId, 'the remote document is not a JSON object');
  try {
    assertJsonSchema(doc as Record<string, unknown>, 'remote schema');
  } catch (e) {
    throw syncFailure(schemaId, (e as Error).message);
  }
  return { schema: doc as Record<string, unknown>, digest: `sha256:${createHash('sha256').update(body).digest('hex')}` };
}
