import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Options } from 'pino-http';
import { loadConfig } from '../../src/config/app-config';
import { loggerParams } from '../../src/observability/logger-params';

describe('log lines and the configured secrets', () => {
  it('replaces every configured secret value in whatever line is written', () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'sk-openai-in-a-log-line',
      LLM_HEADERS: '{"x-team":"header-in-a-log-line"}',
      ANTHROPIC_API_KEY: 'sk-ant-in-a-log-line',
    });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = pino(loggerParams(config).pinoHttp as Options, sink);
    log.warn(
      { headers: { 'x-team': 'header-in-a-log-line' } },
      'MCP server x stderr: key=sk-ant-in-a-log-line',
    );
    log.info('upstream said: Bearer sk-openai-in-a-log-line');
    const text = lines.join('');
    expect(text).toContain('MCP server x stderr: key=<redacted>');
    expect(text).toContain('upstream said: Bearer <redacted>');
    expect(text).not.toMatch(/in-a-log-line/);
  });
});
