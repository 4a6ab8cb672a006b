import { Controller, Get, Header, ServiceUnavailableException } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  type SchemaObject,
} from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator, type HealthCheckResult } from '@nestjs/terminus';
import { Draining } from '../common/draining.service';

const DATABASE_TIMEOUT_MS = 2000;

const HEALTH_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok'] },
    details: { type: 'object', additionalProperties: true },
  },
};

@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly draining: Draining,
  ) {}

  @Get('live')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Liveness: the process serves requests (no key needed)' })
  @ApiOkResponse({ description: 'Serving', schema: HEALTH_SCHEMA })
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Readiness: the database answers and the process is not shutting down (no key needed)',
  })
  @ApiOkResponse({ description: 'Ready', schema: HEALTH_SCHEMA })
  @ApiServiceUnavailableResponse({
    description: 'The database does not answer, or the process is shutting down',
    schema: { $ref: '#/components/schemas/ErrorResponse' },
  })
  async ready(): Promise<HealthCheckResult> {
    if (this.draining.active) {
      throw new ServiceUnavailableException({
        statusCode: 503,
        message: 'Not ready: the server is shutting down',
        error: 'Service Unavailable',
      });
    }
    try {
      return await this.health.check([
        () => this.database.pingCheck('database').withTimeout(DATABASE_TIMEOUT_MS),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      // Terminus's body has an `error` object; the API's error shape has `error` as the status text.
      throw new ServiceUnavailableException({
        statusCode: 503,
        message: 'Not ready: the database does not answer',
        error: 'Service Unavailable',
        details: (error.getResponse() as Partial<HealthCheckResult>).details,
      });
    }
  }
}
