import {
  BadRequestException,
  HttpException,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
  type ArgumentsHost,
} from '@nestjs/common';
import { AllExceptionsFilter } from '../../src/common/all-exceptions.filter';
import { DomainError, ErrorCode } from '../../src/common/domain-error';

interface Sent {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
  ended: boolean;
}

/** A filter run against a recording Fastify reply. */
function run(exception: unknown, { started = false } = {}): Sent {
  const sent: Sent = { headers: {}, ended: false };
  const reply = {
    sent: started,
    raw: { headersSent: started, writableEnded: false, end: () => (sent.ended = true) },
    status(code: number) {
      sent.status = code;
      return reply;
    },
    headers(values: Record<string, string>) {
      Object.assign(sent.headers, values);
      return reply;
    },
    send(body: unknown) {
      sent.body = body;
      return reply;
    },
  };
  const request = { id: 'req-42' };
  const host = {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ArgumentsHost;
  new AllExceptionsFilter({ bodyLimitBytes: 2048 }).catch(exception, host);
  return sent;
}

function fastifyError(code: string, statusCode: number, message: string): Error {
  return Object.assign(new Error(message), { name: 'FastifyError', code, statusCode });
}

/** Every domain error code with the status and error text it must get. */
const MAPPED: [ErrorCode, number, string][] = [
  [ErrorCode.SessionNotFound, 404, 'Not Found'],
  [ErrorCode.RunNotFound, 404, 'Not Found'],
  [ErrorCode.ToolCallNotFound, 404, 'Not Found'],
  [ErrorCode.FileNotFound, 404, 'Not Found'],
  [ErrorCode.ScheduleNotFound, 404, 'Not Found'],
  [ErrorCode.WebhookNotFound, 404, 'Not Found'],
  [ErrorCode.ChildSession, 409, 'Conflict'],
  [ErrorCode.QueueFull, 429, 'Too Many Requests'],
  [ErrorCode.SessionBusy, 409, 'Conflict'],
  [ErrorCode.ToolCallNotWaiting, 409, 'Conflict'],
  [ErrorCode.InvalidRequest, 400, 'Bad Request'],
  [ErrorCode.IdempotencyKeyReused, 422, 'Unprocessable Entity'],
  [ErrorCode.RateLimited, 429, 'Too Many Requests'],
  [ErrorCode.TooManyActiveRuns, 429, 'Too Many Requests'],
  [ErrorCode.BudgetExceeded, 429, 'Too Many Requests'],
  [ErrorCode.ServerBusy, 503, 'Service Unavailable'],
  [ErrorCode.ShuttingDown, 503, 'Service Unavailable'],
  [ErrorCode.ModelFailed, 502, 'Bad Gateway'],
];

describe('AllExceptionsFilter', () => {
  let logged: jest.SpyInstance;
  beforeEach(() => {
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it.each(MAPPED)('maps the domain error %s to %i', (code, status, error) => {
    const sent = run(new DomainError(code, 'because'));
    expect(sent.status).toBe(status);
    expect(sent.body).toEqual({ statusCode: status, message: 'because', error });
  });

  it('has a status for every ErrorCode, each checked above (a new code needs its row)', () => {
    expect(MAPPED.map(([code]) => code).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('puts the details beside the three fields without letting them replace one', () => {
    const sent = run(new DomainError(ErrorCode.SessionBusy, 'busy', { runId: 'r1', statusCode: 200 }));
    expect(sent.body).toEqual({ statusCode: 409, message: 'busy', error: 'Conflict', runId: 'r1' });
  });

  it('sets Retry-After in whole seconds when the error gives it', () => {
    expect(run(new DomainError(ErrorCode.RateLimited, 'slow down', {}, 12.2)).headers['retry-after']).toBe(
      '13',
    );
    expect(run(new DomainError(ErrorCode.RateLimited, 'slow down')).headers['retry-after']).toBeUndefined();
  });

  it("answers an HttpException as Nest does, validation's message list included", () => {
    expect(run(new NotFoundException('no such thing')).body).toEqual({
      statusCode: 404,
      message: 'no such thing',
      error: 'Not Found',
    });
    expect(run(new BadRequestException(['prompt must be a string'])).body).toEqual({
      statusCode: 400,
      message: ['prompt must be a string'],
      error: 'Bad Request',
    });
  });

  it('adds the error text Nest leaves out of an HttpException made from a string', () => {
    expect(run(new HttpException('teapot', 418)).body).toEqual({
      statusCode: 418,
      message: 'teapot',
      error: "I'm a Teapot",
    });
  });

  it('asks for a bearer key with a 401', () => {
    expect(run(new HttpException('no key', 401)).headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it("keeps the status of Fastify's request errors, in the Nest shape", () => {
    expect(
      run(
        fastifyError(
          'FST_ERR_CTP_INVALID_JSON_BODY',
          400,
          "Body is not valid JSON but content-type is set to 'application/json'",
        ),
      ).body,
    ).toEqual({
      statusCode: 400,
      message: "Body is not valid JSON but content-type is set to 'application/json'",
      error: 'Bad Request',
    });
    expect(run(fastifyError('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 'Unsupported Media Type')).status).toBe(
      415,
    );
  });

  it('names the limit on a 413, also when Nest has wrapped the Fastify error', () => {
    const tooLarge = fastifyError('FST_ERR_CTP_BODY_TOO_LARGE', 413, 'Request body is too large');
    const expected = {
      statusCode: 413,
      message: 'Request body is larger than the limit of 2048 bytes (BODY_LIMIT_BYTES)',
      error: 'Payload Too Large',
    };
    expect(run(tooLarge).body).toEqual(expected);
    expect(run(new HttpException(tooLarge.message, 413, { cause: tooLarge })).body).toEqual(expected);
    expect(run(new PayloadTooLargeException()).status).toBe(413);
  });

  it('answers anything else with a bare 500 and the request id, and logs it', () => {
    const secret = new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2');
    const sent = run(secret);
    expect(sent.status).toBe(500);
    expect(sent.body).toEqual({
      statusCode: 500,
      message: 'Internal server error',
      error: 'Internal Server Error',
      requestId: 'req-42',
    });
    expect(logged).toHaveBeenCalledWith(
      expect.objectContaining({
        err: expect.objectContaining({ type: 'Error', message: secret.message }),
        requestId: 'req-42',
      }),
      expect.any(String),
    );
  });

  it('logs an unexpected error without its extra fields, which may hold prompts (query parameters)', () => {
    const failed = Object.assign(new Error('null value in column "seq"'), {
      code: '23502',
      parameters: ['a user prompt that must not reach the logs'],
    });
    run(failed);
    const [entry] = logged.mock.calls.at(-1) as [Record<string, unknown>];
    expect(JSON.stringify(entry)).not.toContain('a user prompt');
    expect(entry.err).toMatchObject({ message: 'null value in column "seq"', code: '23502' });
  });

  it('does not trust a statusCode on an error that is not from Fastify', () => {
    const sent = run(Object.assign(new Error('upstream said 404'), { statusCode: 404 }));
    expect(sent.status).toBe(500);
  });

  it('ends a response that had already started (a stream) instead of writing JSON into it', () => {
    const sent = run(new Error('late failure'), { started: true });
    expect(sent.ended).toBe(true);
    expect(sent.status).toBeUndefined();
    expect(sent.body).toBeUndefined();
  });
});
