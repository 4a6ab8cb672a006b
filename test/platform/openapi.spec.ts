import { createConfig, lintFromString } from '@redocly/openapi-core';
import { startApp, type TestApp } from '../support/app';

type Json = Record<string, unknown>;

/** Every "$ref" string anywhere in the document. */
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, found));
  else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string') found.push(v);
      else refs(v, found);
    }
  }
  return found;
}

function resolvePointer(document: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (node, part) => (node !== null && typeof node === 'object' ? (node as Json)[part] : undefined),
      document,
    );
}

const CONTRACT: [method: string, path: string][] = [
  ['post', '/v1/chat'],
  ['post', '/v1/sessions'],
  ['get', '/v1/sessions'],
  ['get', '/v1/sessions/{id}'],
  ['delete', '/v1/sessions/{id}'],
  ['post', '/v1/sessions/{id}/messages'],
  ['get', '/v1/runs/{id}'],
  ['get', '/v1/runs/{id}/events'],
  ['post', '/v1/runs/{id}/cancel'],
  ['post', '/v1/runs/{id}/tool-calls/{callId}/approval'],
  ['post', '/v1/runs/{id}/tool-calls/{callId}/result'],
  ['post', '/v1/runs/{id}/stream-token'],
  ['get', '/v1/tools'],
  ['get', '/v1/models'],
  ['get', '/v1/agents'],
  ['get', '/v1/mcp/servers'],
  ['get', '/v1/sessions/{id}/changes'],
  ['post', '/v1/sessions/{id}/compact'],
  ['post', '/v1/schedules'],
  ['get', '/v1/schedules'],
  ['get', '/v1/schedules/{id}'],
  ['patch', '/v1/schedules/{id}'],
  ['delete', '/v1/schedules/{id}'],
  ['get', '/v1/schedules/{id}/runs'],
  ['get', '/health/live'],
  ['get', '/health/ready'],
  ['get', '/metrics'],
];

const EVENT_SCHEMAS = [
  'RunStartedEvent',
  'TextEvent',
  'ToolCallStartEvent',
  'ToolApprovalRequiredEvent',
  'ToolCallOutputEvent',
  'ToolCallResultEvent',
  'StepFinishedEvent',
  'ContextCompactedEvent',
  'DoneEvent',
  'ErrorEvent',
  'RunResumedEvent',
  'ReasoningEvent',
  'SubagentStartedEvent',
  'SubagentFinishedEvent',
  'QueuedEvent',
];

describe('the OpenAPI document', () => {
  let t: TestApp;
  let document: Json & {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Record<string, Json> };
  };
  beforeAll(async () => {
    t = await startApp({ API_KEYS: 'tester:platform-test-key' });
    const res = await fetch(`${t.url}/docs/json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    document = (await res.json()) as typeof document;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is OpenAPI 3 titled Loopwright, with bearer authentication', () => {
    expect(String(document.openapi)).toMatch(/^3\./);
    expect((document.info as Json).title).toBe('Loopwright');
    expect((document.components as Json).securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
    });
  });

  it('names every route of the contract', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(operations).toEqual(expect.arrayContaining(CONTRACT.map(([method, path]) => `${method} ${path}`)));
  });

  it('gives every operation its responses', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const responses = operation.responses as Json | undefined;
        expect({
          operation: `${method} ${path}`,
          responses: Object.keys(responses ?? {}).length > 0,
        }).toEqual({
          operation: `${method} ${path}`,
          responses: true,
        });
      }
    }
  });

  it('resolves every $ref', () => {
    const all = refs(document);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((ref) => resolvePointer(document, ref) === undefined)).toEqual([]);
  });

  it('describes each event type and RunEvent as one of them', () => {
    const schemas = document.components.schemas;
    for (const name of EVENT_SCHEMAS) expect(schemas[name]).toMatchObject({ type: 'object' });
    expect(schemas.RunEvent.oneOf).toEqual(
      EVENT_SCHEMAS.map((name) => ({ $ref: `#/components/schemas/${name}` })),
    );
    expect(schemas.ToolCallStartEvent).toMatchObject({
      required: expect.arrayContaining([
        'type',
        'runId',
        'seq',
        'toolCallId',
        'name',
        'arguments',
        'executor',
      ]),
    });
  });

  it('describes the streaming routes as text/event-stream of RunEvent', () => {
    for (const [method, path] of [
      ['post', '/v1/chat'],
      ['post', '/v1/sessions/{id}/messages'],
      ['get', '/v1/runs/{id}/events'],
    ]) {
      const ok = (document.paths[path][method].responses as Record<string, Json>)['200'];
      expect({ route: `${method} ${path}`, content: ok?.content }).toMatchObject({
        route: `${method} ${path}`,
        content: { 'text/event-stream': { schema: { $ref: '#/components/schemas/RunEvent' } } },
      });
    }
  });

  it('documents the answers the platform gives before a controller runs', () => {
    const chat = document.paths['/v1/chat'].post.responses as Record<string, Json>;
    for (const status of ['400', '401', '413', '415']) {
      expect({ status, content: chat[status]?.content }).toEqual({
        status,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
      });
    }
    expect(Object.keys(document.paths['/v1/tools'].get.responses as Json)).toContain('401');
    expect(Object.keys(document.paths['/health/live'].get.responses as Json)).not.toContain('401');
  });

  it('types the body of every success answer (but 202 and 204, which have none)', () => {
    for (const [method, path] of CONTRACT) {
      const responses = document.paths[path][method].responses as Record<string, Json>;
      for (const [status, response] of Object.entries(responses).filter(([s]) => /^2/.test(s))) {
        const typed = status === '202' || status === '204' || response.content !== undefined;
        expect({ route: `${method} ${path}`, status, typed }).toEqual({
          route: `${method} ${path}`,
          status,
          typed: true,
        });
      }
    }
    const created = document.paths['/v1/sessions'].post.responses as Record<string, Json>;
    expect(created['201'].content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/SessionResponse' } },
    });
    expect(document.paths['/v1/sessions'].post.requestBody).toMatchObject({ required: false });
    expect(JSON.stringify((document.components as Json).securitySchemes)).not.toContain('JWT');
  });

  it('declares the errors each route answers, with their shape', () => {
    const errorsOf = (method: string, path: string) =>
      Object.keys(document.paths[path][method].responses as Json).filter((s) => /^[45]/.test(s));
    expect(errorsOf('post', '/v1/chat')).toEqual(
      expect.arrayContaining(['400', '401', '404', '409', '413', '415', '421', '422', '429', '503']),
    );
    expect(errorsOf('get', '/v1/runs/{id}')).toEqual(expect.arrayContaining(['401', '404', '421']));
    expect(errorsOf('post', '/v1/runs/{id}/tool-calls/{callId}/approval')).toEqual(
      expect.arrayContaining(['400', '404', '409']),
    );
    expect(errorsOf('delete', '/v1/sessions/{id}')).toEqual(expect.arrayContaining(['404', '409']));
    expect(errorsOf('post', '/v1/sessions/{id}/compact')).toEqual(
      expect.arrayContaining(['401', '404', '409', '429']),
    );
    expect(errorsOf('get', '/health/live')).toEqual(['421']);
  });

  it("passes Redocly's recommended ruleset with no error and no warning", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: '/docs/json',
      config,
    });
    expect(
      problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    ).toEqual([]);
  });

  it('asks for the key on /v1 routes, and says the public ones need none', () => {
    expect(document.paths['/v1/sessions'].get.security).toEqual([{ bearer: [] }]);
    expect(document.paths['/health/ready'].get.security).toEqual([]);
    expect(document.paths['/metrics'].get.security).toEqual([]);
  });
});
