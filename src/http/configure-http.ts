import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import multipart from '@fastify/multipart';
import { Logger } from 'nestjs-pino';
import { apiKeyAuthHook } from '../auth/api-key-auth.hook';
import { loopbackHostHook } from '../auth/loopback-host.hook';
import { AllExceptionsFilter } from '../common/all-exceptions.filter';
import type { AppConfig } from '../config/app-config';
import { QuietNestBoot } from '../observability/quiet-nest-boot';
import { echoRequestIdHook, requestIdFor } from '../observability/request-id';
import { corsOptions } from './cors-options';
import { jsonBodyParser } from './json-body-parser';
import { jsonOnlyHook } from './json-only.hook';
import { addRawUploadParser, rawUploadHook } from './raw-upload';
import { setupOpenApi, type OpenApiSchemas } from './openapi';
import { addSecurityHeaders } from './security-headers';
import { createValidationPipe } from './validation-pipe';

/**
 * The HTTP surface shared by every route: logging, errors, security headers, CORS, who may call,
 * what bodies are read, validation, and the API's documentation. Runs before app.init().
 *
 * Request checks are Fastify onRequest hooks, in this order: (Nest's CORS hook answers preflights
 * first), 421 wrong Host while auth is off, 401 no or wrong key, 415 a body that is not JSON (but
 * on the upload routes, http/raw-upload.ts). They
 * run before the body is read and before routing answers 404, and after nestjs-pino's middleware,
 * so every rejection carries a request id and is logged.
 */
export async function configureHttp(
  app: NestFastifyApplication,
  config: AppConfig,
  openApiSchemas: OpenApiSchemas = {},
): Promise<void> {
  app.useLogger(new QuietNestBoot(app.get(Logger)));
  app.useGlobalFilters(new AllExceptionsFilter(config));
  app.useGlobalPipes(createValidationPipe());

  const fastify = app.getHttpAdapter().getInstance();
  addSecurityHeaders(fastify);
  const cors = corsOptions(config);
  if (cors !== null) app.enableCors(cors);

  fastify.setGenReqId(requestIdFor);
  fastify.addHook('onRequest', echoRequestIdHook());
  // Only JSON is parsed (jsonOnlyHook refuses other bodies before this matters).
  fastify.removeContentTypeParser('text/plain');
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(parseJson));
  // Files ("Attachments"): a raw body streamed to its handler, or one multipart part. Busboy stops a
  // part one byte past FILE_MAX_BYTES (silently: it ends the stream truncated), so the handler's own
  // count of the bytes it reads sees the excess and answers the 413.
  addRawUploadParser(fastify);
  await app.register(multipart, {
    limits: {
      fileSize: config.fileMaxBytes + 1,
      files: 1,
      fields: 8,
      fieldSize: 1024,
      parts: 9,
      headerPairs: 64,
    },
  });
  if (config.apiKeys === null) fastify.addHook('onRequest', loopbackHostHook());
  fastify.addHook('onRequest', apiKeyAuthHook(config.apiKeys));
  fastify.addHook('onRequest', rawUploadHook());
  fastify.addHook('onRequest', jsonOnlyHook());

  setupOpenApi(app, openApiSchemas);
}
