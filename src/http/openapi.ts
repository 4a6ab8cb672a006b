import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { isPublicRoute } from '../auth/public-routes';
import { ERROR_RESPONSE_REF } from './api-errors.decorator';
import { serveSwaggerUi } from './swagger-ui';

export const DOCS_PATH = '/docs';
export const DOCS_JSON_PATH = '/docs/json';
const BEARER = 'bearer';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const ERROR_RESPONSE = { $ref: ERROR_RESPONSE_REF };

/** Named schemas the feature modules add to the document (the run events, say): http knows none of them. */
export type OpenApiSchemas = NonNullable<OpenAPIObject['components']>['schemas'];

/** The OpenAPI document of every controller, served at /docs/json, with its UI at /docs. */
export function setupOpenApi(app: NestFastifyApplication, schemas: OpenApiSchemas = {}): void {
  const config = new DocumentBuilder()
    .setTitle('Loopwright')
    .setDescription(
      'A self-hosted agent server: prompts in, Server-Sent Events out, an LLM tool loop in between. ' +
        'Every /v1 route needs `Authorization: Bearer <key>` when the server has API_KEYS.',
    )
    .setVersion('1')
    .setLicense('MIT', 'https://opensource.org/licenses/MIT')
    .addServer('/', 'This server')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'A secret of API_KEYS (an opaque string)' },
      BEARER,
    )
    .build();
  // Built on first request: by then every controller, the owner's included, is registered.
  SwaggerModule.setup(
    DOCS_PATH,
    app,
    () => completeDocument(SwaggerModule.createDocument(app, config), schemas),
    {
      ui: false,
      raw: ['json'],
      jsonDocumentUrl: DOCS_JSON_PATH,
    },
  );
  serveSwaggerUi(app.getHttpAdapter().getInstance(), DOCS_PATH, DOCS_JSON_PATH, 'Loopwright API');
}

/**
 * Adds the event schemas the streaming routes refer to, and what the platform answers on every
 * route before a controller runs: the 421 of a non-loopback Host while auth is off; on routes that
 * are not public the key requirement with its 401 (public ones say `security: []`); and for routes
 * with a body the 400 (bad JSON), 413 and 415.
 */
export function completeDocument(document: OpenAPIObject, schemas: OpenApiSchemas = {}): OpenAPIObject {
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...schemas },
  };
  const bearer = document.components.securitySchemes?.[BEARER];
  if (bearer && 'bearerFormat' in bearer) delete bearer.bearerFormat;
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      // Without API_KEYS every route, public ones too, refuses a Host that is not a loopback name.
      const platformErrors: [string, string][] = [
        ['421', 'The Host is not a loopback name while the server runs without API_KEYS'],
      ];
      if (isPublicRoute(path.replace(/\{(\w+)\}/g, ':$1'))) {
        operation.security = [];
      } else {
        operation.security ??= [{ [BEARER]: [] }];
        platformErrors.push(['401', 'No or wrong API key (or stream token)']);
      }
      if (operation.requestBody) {
        platformErrors.push(
          ['400', 'The body is not valid JSON or not a valid request'],
          ['413', 'The body is larger than BODY_LIMIT_BYTES'],
          ['415', 'The body is not application/json'],
        );
      }
      for (const [status, description] of platformErrors) {
        operation.responses[status] ??= {
          description,
          content: { 'application/json': { schema: ERROR_RESPONSE } },
        };
      }
    }
  }
  return document;
}
