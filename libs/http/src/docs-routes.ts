// The module's documents: OpenAPI 3.1 from the operation table, and the browsable reference pages.
import type express from 'express';
import type { Response } from 'express';
import { MODULES } from '@platform/core';
import type { Operation } from './operation';
import { buildOpenApi } from './openapi';
import { DOCS_CSP, docsAsset, moduleDocsPage, platformDocsPage } from './docs';

/**
 * `/<service>/openapi.json`, and the interactive reference (Swagger UI from node_modules, docs.ts): this
 * module's page, its assets, and the platform's page of every module at /docs (the gateways send /docs
 * to identity). Each is made on its first request.
 */
export function mountDocs(app: express.Express, service: string, operations: Operation<any>[]): void {
  let openapi: ReturnType<typeof buildOpenApi> | undefined;
  const doc = () => (openapi ??= buildOpenApi(service, operations));
  app.get(`/${service}/openapi.json`, (_req, res) => {
    res.json(doc());
  });
  const moduleNames = Object.keys(MODULES);
  let modulePage: string | undefined;
  let platformPage: string | undefined;
  const sendPage = (res: Response, html: string) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('html').send(html);
  };
  app.get(`/${service}/docs`, (_req, res) => {
    sendPage(res, (modulePage ??= moduleDocsPage(service, moduleNames)));
  });
  app.get('/docs', (_req, res) => {
    sendPage(res, (platformPage ??= platformDocsPage(service, moduleNames)));
  });
  app.get(`/${service}/docs/assets/:file`, (req, res, next) => {
    const asset = docsAsset(req.params.file);
    if (!asset) return next();
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type(asset.type).send(asset.body);
  });
}
