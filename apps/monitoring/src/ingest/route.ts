import type express from 'express';
import { errors } from '@platform/errors';
import { parseBytes, parseJsonText, readBody, type RouteHelpers } from '@platform/http';
import type { IngestService } from './service';

export const WEBHOOK_EVENTS_PATH = '/monitoring/v1/webhook/:webhook_id/:access_key/events';
// The webhook URL carries the access key: config/modules.json names the path as secret, so every
// logged path hides it (the app's and the gateway's).

/**
 * A monitoring system's payload: any JSON object, at most 64 levels deep. Unlike operation bodies, a
 * payload keeps keys like `constructor` (an alert label may be called so): it is data the plugins
 * read by own-property access, never a path into an object.
 */
const PAYLOAD_LIMITS = { maxDepth: 64, refuseUnsafeKeys: false, refuseNul: true };

/** The posted body as a JSON object. Any Content-Type is read: SNS, for one, posts JSON as text/plain. */
function payload(text: string) {
  if (!text.trim()) return {};
  const data = parseJsonText(text, PAYLOAD_LIMITS);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw errors.invalidArgument('Request body must be a JSON object.');
  return data as Record<string, unknown>;
}

/**
 * The webhook URL: `POST <PUBLIC_BASE_URL>/monitoring/v1/webhook/<webhook_id>/<access_key>/events`
 * with the monitoring system's own payload and no token. The webhook and its key are checked before
 * the body is read; a caller without them sends its bytes to a closed connection.
 */
export function webhookRoute(ingest: IngestService, bodyLimit = '1mb') {
  const limit = parseBytes(bodyLimit);
  return (app: express.Express, { post }: RouteHelpers) => {
    // Dispatched ahead of Express, as the operations are (a monitoring system posts at its own rate).
    post(WEBHOOK_EVENTS_PATH, '/monitoring/v1/webhook/{webhook_id}/{access_key}/events', async (req, params) => {
      const webhook = await ingest.authorize(params.webhook_id, params.access_key);
      const body = await readBody(req, limit, bodyLimit);
      await ingest.accept(webhook, payload(body.toString('utf8')), body.length);
      return {};
    });
    app.all(WEBHOOK_EVENTS_PATH, (req, _res, next) => next(errors.methodNotAllowed(req.method)));
  };
}
