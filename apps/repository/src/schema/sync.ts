import { createHash } from 'node:crypto';
import { fetchUrl, OutboundRefused, urlForDisplay } from '@platform/net';
import type { RepositoryConfig } from '../config';
import { assertJsonSchema } from './json-schema';
import type { RemoteRepository } from './source';

/**
 * Fetches the remote document of a schema and checks it: a JSON object that is a valid JSON Schema.
 * Answers the schema and its digest. Any failure (a refused address, an unreachable source, a status
 * other than 200, a document that is not a JSON Schema) is @platform/net's uniform `OutboundRefused`,
 * as the answer and as `last_error`: neither quotes what the source sent nor tells one failure from
 * another; the detail goes to the log.
 */
export async function fetchRemoteSchema(schemaId: string, remote: RemoteRepository, key: string, config: RepositoryConfig['sync']) {
  const res = await fetchUrl(remote.source_url, {
    policy: config.outbound,
    timeoutMs: config.timeoutMs,
    maxBytes: config.maxBytes,
    maxRedirects: config.maxRedirects,
    key,
    headers: { accept: 'application/schema+json, application/json;q=0.9, */*;q=0.1' },
  });
  const refuse = (why: string) => new OutboundRefused(key, `sync of schema ${schemaId} from ${urlForDisplay(res.url)}: ${why}`);
  if (res.status !== 200) throw refuse(`answered HTTP ${res.status}`);
  let doc: unknown;
  try {
    doc = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw refuse('not JSON');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw refuse('not a JSON object');
  try {
    assertJsonSchema(doc as Record<string, unknown>, 'remote schema');
  } catch (e) {
    throw refuse(`not a valid JSON Schema (${(e as Error).message.slice(0, 200)})`);
  }
  return { schema: doc as Record<string, unknown>, digest: `sha256:${createHash('sha256').update(res.body).digest('hex')}` };
}
