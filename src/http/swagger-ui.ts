import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

// The UI files of swagger-ui-dist (a dependency of @nestjs/swagger) served by name: a fixed list,
// so no request path ever reaches the file system.
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * Serves the OpenAPI UI at `path` for the document at `documentUrl`. @nestjs/swagger's own UI needs
 * @fastify/static; this needs nothing, and keeps every script in a file so the default
 * Content-Security-Policy (no inline scripts) holds for the UI too.
 */
export function serveSwaggerUi(
  fastify: FastifyInstance,
  path: string,
  documentUrl: string,
  title: string,
): void {
  const root = dirname(require.resolve('swagger-ui-dist/package.json'));
  const html = page(title, path);
  const init = initScript(documentUrl);
  for (const url of [path, `${path}/`]) {
    fastify.get(url, (_request, reply) => reply.type('text/html; charset=utf-8').send(html));
  }
  fastify.get(`${path}/swagger-ui-init.js`, (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').send(init),
  );
  for (const [name, type] of Object.entries(ASSETS)) {
    const content = readFileSync(join(root, name));
    fastify.get(`${path}/${name}`, (_request, reply) =>
      reply.type(type).header('cache-control', 'public, max-age=3600').send(content),
    );
  }
}

function page(title: string, path: string): string {
  // Absolute asset URLs: the page is served both with and without a trailing slash.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<link rel="icon" type="image/png" href="${path}/favicon-32x32.png">
<link rel="stylesheet" href="${path}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${path}/swagger-ui-bundle.js"></script>
<script src="${path}/swagger-ui-init.js"></script>
</body>
</html>
`;
}

function initScript(documentUrl: string): string {
  return `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(documentUrl)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null
});
`;
}
