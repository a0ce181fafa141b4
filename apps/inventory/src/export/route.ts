import type express from 'express';
import type { Logger } from '@platform/core';
import type { RouteHelpers } from '@platform/http';

/** Where export files are fetched with GET: the URL the export operation answers, plus a token. */
export const DOWNLOAD_PATH = '/inventory/v1/cloud-service/export/download';

type Download = (token: string, authorization: string | undefined, res: express.Response, logger: Logger) => Promise<void>;

/** The download route, for createServiceApp's `routes`: the token is the credential (export/service.ts). */
export function downloadRoute(download: Download) {
  return (app: express.Express, { wrap }: RouteHelpers) => {
    app.get(
      `${DOWNLOAD_PATH}/:token`,
      wrap('GET ' + DOWNLOAD_PATH, (req, res, ctx) => download(String(req.params.token), req.headers.authorization, res, ctx.logger)),
    );
  };
}
