import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { ModelError } from '../../src/llm/model-provider';
import { mapUpstreamError } from '../../src/llm/upstream-error.mapper';

function statusError(status: number, message = 'boom'): APIError {
  return APIError.generate(status, { error: { message } }, undefined, new Headers());
}

describe('mapUpstreamError', () => {
  it.each([
    [429, 'UPSTREAM_RATE_LIMITED', true],
    [500, 'UPSTREAM_UNAVAILABLE', true],
    [502, 'UPSTREAM_UNAVAILABLE', true],
    [503, 'UPSTREAM_UNAVAILABLE', true],
    [401, 'UPSTREAM_AUTH', false],
    [403, 'UPSTREAM_AUTH', false],
    [408, 'UPSTREAM_TIMEOUT', true],
    [400, 'UPSTREAM_BAD_REQUEST', false],
    [404, 'UPSTREAM_BAD_REQUEST', false],
    [409, 'UPSTREAM_BAD_REQUEST', false],
  ])('maps HTTP %i to %s (retryable: %s) and keeps the status', (status, code, retryable) => {
    expect(mapUpstreamError(statusError(status))).toMatchObject({ code, retryable, status });
  });

  it('maps an SDK timeout to retryable UPSTREAM_TIMEOUT', () => {
    expect(mapUpstreamError(new APIConnectionTimeoutError())).toMatchObject({
      code: 'UPSTREAM_TIMEOUT',
      retryable: true,
    });
  });

  it('maps an SDK connection error to retryable UPSTREAM_CONNECTION and names the cause', () => {
    const error = mapUpstreamError(
      new APIConnectionError({
        message: 'Connection error.',
        cause: new Error('connect ECONNREFUSED 127.0.0.1:9'),
      }),
    );
    expect(error).toMatchObject({ code: 'UPSTREAM_CONNECTION', retryable: true });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('maps a body that broke off (undici "terminated") to retryable UPSTREAM_CONNECTION', () => {
    expect(mapUpstreamError(new TypeError('terminated'))).toMatchObject({
      code: 'UPSTREAM_CONNECTION',
      retryable: true,
    });
  });

  it('maps the SDK malformed-JSON SyntaxError to UPSTREAM_MALFORMED, not retryable', () => {
    const error = new SyntaxError('Error reading response: malformed server-sent event JSON.');
    expect(mapUpstreamError(error)).toMatchObject({ code: 'UPSTREAM_MALFORMED', retryable: false });
  });

  it.each([
    [{ message: 'Overloaded', type: 'overloaded_error' }, true],
    [{ message: 'x', code: 502 }, true],
    [{ message: 'Internal server error' }, true],
    [{ message: 'context length exceeded', type: 'invalid_request_error', code: 400 }, false],
    [{ message: 'bad tool json' }, false],
  ])('maps a mid-stream error object %j to UPSTREAM_ERROR with retryable %s', (body, retryable) => {
    const error = mapUpstreamError(new APIError(undefined, body, undefined, undefined));
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable });
    expect(error.status).toBeUndefined();
  });

  it('returns a ModelError unchanged', () => {
    const error = new ModelError('UPSTREAM_CONNECTION', 'x', true);
    expect(mapUpstreamError(error)).toBe(error);
  });

  it('keeps messages short', () => {
    expect(mapUpstreamError(statusError(400, 'x'.repeat(5000))).message.length).toBeLessThan(600);
  });
});
