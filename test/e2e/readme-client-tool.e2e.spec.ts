import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { lastToolMessage } from '../support/agent-scripts';
import { startApp, type TestApp } from '../support/app';

/** The shell blocks of the README's section `heading`, in order, as one script. */
function readmeSnippet(heading: string): string {
  const readme = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`the README has no section "${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
}

/** Runs `script` with bash in `cwd`; killed (and so failed) after `timeoutMs`. */
function bash(script: string, cwd: string, timeoutMs: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn('bash', ['-e', '-c', script], { cwd, detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr: stderr.slice(-2000) });
    });
  });
}

describe("the README's client-tool snippet, run as written (e2e)", () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('answers the client call with the id it takes from the stream, and the run ends', async () => {
    upstream.enqueue(
      toolCalls([{ id: 'call_loc', name: 'get_location', arguments: {} }]),
      text('You are in Paris.'),
    );
    const script = readmeSnippet('Client-side tools').replaceAll('localhost:3000', new URL(app.url).host);
    const run = await bash(script, mkdtempSync(join(tmpdir(), 'readme-')), 20_000);
    expect(run.stderr).not.toMatch(/404|Not Found/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('"type":"tool_call_result","toolCallId":"call_loc"');
    expect(run.stdout).toContain('"status":"completed"');
    expect(lastToolMessage(upstream.requests[1])).toMatchObject({
      tool_call_id: 'call_loc',
      content: 'Paris, France',
    });
  });
});
