import { logLineText } from '../../src/observability/log-text';

describe('log lines as text for a terminal', () => {
  it("says a request's line as method, url, status and time", () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-12-02T02:59:07.123Z',
      pid: 1,
      hostname: 'vm',
      requestId: 'r-1',
      req: { id: 'r-1', method: 'GET', url: '/v1/models', remoteAddress: '127.0.0.1' },
      res: { statusCode: 200 },
      responseTime: 12,
      msg: 'request completed',
    });
    expect(logLineText(line)).toBe('02:59:07.123 INFO  GET /v1/models 200 12ms  requestId=r-1');
  });

  it('keeps the context, the fields and an error stack', () => {
    const line = JSON.stringify({
      level: 50,
      time: '2026-12-02T02:59:07.123Z',
      context: 'RunOrchestrator',
      runId: 'run-1',
      usage: { promptTokens: 1 },
      err: { message: 'boom', stack: 'Error: boom\n    at x' },
      msg: 'run failed',
    });
    expect(logLineText(line)).toBe(
      '02:59:07.123 ERROR [RunOrchestrator] run failed  runId=run-1 usage={"promptTokens":1}\n    Error: boom\n        at x',
    );
  });

  it('passes a line that is not JSON through', () => {
    expect(logLineText('plain words')).toBe('plain words');
  });
});
