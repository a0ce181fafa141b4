import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The interactive API reference: Swagger UI (the `swagger-ui-dist` package, a production dependency)
 * served from node_modules by every app, so no asset comes from the internet. Each module's page is at
 * `/<module>/docs`; the platform's page, one definition per module, is at `/docs` (the gateways route
 * `/docs` to identity). A strict Content-Security-Policy keeps the page to its own origin.
 */

/** The files of swagger-ui-dist a page loads, by the name it asks for; nothing else is served. */
const PACKAGE_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Our own start script (CSP allows no inline script): reads the page's JSON configuration and starts
 * Swagger UI with it. No validator badge (it would call the internet), deep links, and the token the
 * user enters in "Authorize" sent as `Authorization: Bearer`.
 */
const INIT_JS = `(function () {
  var config = JSON.parse(document.getElementById('docs-config').textContent);
  var options = {
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    displayRequestDuration: true,
    docExpansion: 'list',
    filter: true,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  };
  if (config.urls) {
    options.urls = config.urls;
    options['urls.primaryName'] = config.primary;
    options.presets.push(SwaggerUIStandalonePreset);
    options.layout = 'StandaloneLayout';
  } else {
    options.url = config.url;
  }
  window.ui = SwaggerUIBundle(options);
})();
`;

const CSS = `body{margin:0;font:14px system-ui,sans-serif}
header{padding:12px 20px;border-bottom:1px solid #e4e4e4;background:#fafafa}
header h1{font-size:20px;margin:0 0 6px}
header nav a{margin-right:14px;color:#1f5fae;text-decoration:none}
header nav a:hover{text-decoration:underline}
header p{margin:4px 0 0;color:#555}
.topbar .download-url-wrapper input{display:none}`;

/** Security headers of the pages: every asset, script and request from this origin only. */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

let packageDir: string | undefined;
function swaggerUiDir(): string {
  // Resolved at run time from node_modules (the production image installs production dependencies).
  return (packageDir ??= path.dirname(require.resolve('swagger-ui-dist/package.json')));
}

const cache = new Map<string, Buffer>();

/** An asset of the docs pages by name: its bytes and media type, or undefined when it is not one. */
export function docsAsset(name: string): { body: Buffer; type: string } | undefined {
  if (name === 'init.js') return { body: (cache.get(name) ?? cache.set(name, Buffer.from(INIT_JS)).get(name))!, type: 'text/javascript; charset=utf-8' };
  if (name === 'docs.css') return { body: (cache.get(name) ?? cache.set(name, Buffer.from(CSS)).get(name))!, type: 'text/css; charset=utf-8' };
  if (!Object.hasOwn(PACKAGE_ASSETS, name)) return undefined;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(path.join(swaggerUiDir(), name));
    cache.set(name, body);
  }
  return { body, type: PACKAGE_ASSETS[name] };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** JSON inside a `<script type="application/json">`: no `<` (so no `</script>`), no line separators. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

function page(opts: { title: string; assets: string; config: unknown; header: string }): string {
  const a = (f: string) => `${opts.assets}/${f}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
<link rel="icon" type="image/png" href="${a('favicon-32x32.png')}" sizes="32x32">
<link rel="stylesheet" href="${a('swagger-ui.css')}"><link rel="stylesheet" href="${a('docs.css')}">
</head><body>
${opts.header}
<div id="swagger-ui"></div>
<script id="docs-config" type="application/json">${scriptJson(opts.config)}</script>
<script src="${a('swagger-ui-bundle.js')}"></script>
<script src="${a('swagger-ui-standalone-preset.js')}"></script>
<script src="${a('init.js')}"></script>
</body></html>`;
}

const TOKEN_HINT =
  '<p>Every operation is <code>POST</code> with a JSON body. Get a token with <code>/identity/v2/token/issue</code> and <code>/identity/v2/token/grant</code>, then "Authorize" with the access token.</p>';

/** The page of one module: its own OpenAPI document. */
export function moduleDocsPage(service: string, modules: string[]): string {
  const links = modules.map((m) => `<a href="/${encodeURI(m)}/docs"${m === service ? ' aria-current="page"' : ''}>${escapeHtml(m)}</a>`).join('');
  return page({
    title: `${service} API`,
    assets: `/${service}/docs/assets`,
    config: { url: `/${service}/openapi.json` },
    header: `<header><h1>${escapeHtml(service)} API</h1><nav><a href="/docs">all modules</a>${links}<a href="/${encodeURI(service)}/openapi.json">openapi.json</a></nav>${TOKEN_HINT}</header>`,
  });
}

/** The platform's page: every module's document, chosen in the top bar (assets from the app that serves it). */
export function platformDocsPage(service: string, modules: string[]): string {
  const links = modules.map((m) => `<a href="/${encodeURI(m)}/docs">${escapeHtml(m)}</a>`).join('');
  return page({
    title: 'Platform API',
    assets: `/${service}/docs/assets`,
    config: { urls: modules.map((m) => ({ name: m, url: `/${m}/openapi.json` })), primary: modules[0] },
    header: `<header><h1>Platform API</h1><nav>${links}</nav>${TOKEN_HINT}</header>`,
  });
}
