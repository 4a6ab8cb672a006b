import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/app-config';
import { errorResponse } from './error-response';

/**
 * The one place errors become HTTP answers (see errorResponse): route handlers, guards and pipes,
 * and also Fastify's hooks, body parsing and not-found handler, which Nest routes here. Anything
 * unexpected is logged with the request id and answered with a 500 that carries nothing else.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger(AllExceptionsFilter.name);

  constructor(private readonly config: Pick<AppConfig, 'bodyLimitBytes'>) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const requestId = String(request.id);
    const response = errorResponse(exception, { requestId, bodyLimitBytes: this.config.bodyLimitBytes });
    if (response.unexpected) {
      this.logger.error({ err: loggable(exception), requestId }, 'Unhandled error while serving a request');
    }
    if (reply.sent || reply.raw.headersSent) {
      // A stream (SSE hijacks the reply) was already answering: the status line is gone, so end it.
      if (!response.unexpected) {
        this.logger.warn({ err: loggable(exception), requestId }, 'Error after the response started');
      }
      if (!reply.raw.writableEnded) reply.raw.end();
      return;
    }
    void reply.status(response.status).headers(response.headers).send(response.body);
  }
}

/**
 * What of an error may be logged: its kind, message, code and stack. Never its other fields: a
 * database error carries the query's parameters, and those hold prompts and tool output.
 */
function loggable(exception: unknown): Record<string, unknown> {
  if (!(exception instanceof Error)) return { type: typeof exception };
  const code = (exception as { code?: unknown }).code;
  return {
    type: exception.name,
    message: exception.message,
    ...(code === undefined ? {} : { code }),
    stack: exception.stack,
  };
}
