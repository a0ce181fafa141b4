import express from 'express';
import { errors } from '@platform/errors';
import type { RouteHelpers } from '@platform/http';
import type { IngestService } from './accept';

export const WEBHOOK_EVENTS_PATH = '/monitoring/v1/webhook/:webhook_id/:access_key/events';

/** The posted body as a JSON object. Any Content-Type is read: SNS, for one, posts JSON as text/plain. */
function payload(body: unknown) {
  const text = typeof body === 'string' ? body.trim() : '';
  if (!text) return {};
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw errors.malformedJson();
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw errors.invalidArgument('Request body must be a JSON object.');
  return data as Record<string, unknown>;
}

/**
 * The webhook URL: `POST <PUBLIC_BASE_URL>/monitoring/v1/webhook/<webhook_id>/<access_key>/events`
 * with the monitoring system's own payload and no token. The access key is taken out of the URL
 * before anything logs it.
 */
export function webhookRoute(ingest: IngestService, bodyLimit = '1mb') {
  const readText = express.text({ type: () => true, limit: bodyLimit });
  return (app: express.Express, { wrap }: RouteHelpers) => {
    app.post(
      WEBHOOK_EVENTS_PATH,
      (req, res, next) => {
        res.locals.webhookId = req.params.webhook_id;
        res.locals.accessKey = req.params.access_key;
        req.url = `/monitoring/v1/webhook/${encodeURIComponent(String(req.params.webhook_id))}/***/events`;
        next();
      },
      readText,
      wrap('/monitoring/v1/webhook/{webhook_id}/{access_key}/events', async (req, res) => {
        await ingest.accept(String(res.locals.webhookId), String(res.locals.accessKey), payload(req.body), typeof req.body === 'string' ? req.body.length : 0);
        res.status(200).json({});
      }),
    );
    app.all(WEBHOOK_EVENTS_PATH, (req, _res, next) => next(errors.methodNotAllowed(req.method)));
  };
}
