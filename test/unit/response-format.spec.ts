import { toMessageParams } from '../../src/llm/providers/anthropic/anthropic-request.mapper';
import { checkAnswer } from '../../src/agent/structured-output';
import { qualifiesForStrict } from '../../src/llm/providers/openai/strict-schema';
import { checkResponseFormat } from '../../src/sessions/response-format';

/** Nests `levels` objects: { type, properties: { a: … } } — two JSON levels each. */
function nested(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'object' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

/** The pure parts of structured output: the schema's check, OpenAI's strict rule, the answer's check. */
describe('response formats', () => {
  it('a schema deeper than 64 levels is refused naming responseFormat (a body cannot carry one; a stored one is held to it too)', () => {
    expect(() => checkResponseFormat({ type: 'json_schema', schema: nested(40) })).toThrow(
      /^responseFormat\.schema: the schema nests deeper than 64 levels/,
    );
    expect(checkResponseFormat({ type: 'json_schema', schema: nested(20) }).schema).toEqual(nested(20));
  });

  it('strict only for closed objects requiring every property, at every level', () => {
    const closed = {
      type: 'object',
      properties: {
        a: {
          type: 'object',
          properties: { b: { type: 'string' } },
          required: ['b'],
          additionalProperties: false,
        },
      },
      required: ['a'],
      additionalProperties: false,
    };
    expect(qualifiesForStrict(closed)).toBe(true);
    const inner = structuredClone(closed);
    delete (inner.properties.a as Record<string, unknown>).additionalProperties;
    expect(qualifiesForStrict(inner)).toBe(false);
    expect(qualifiesForStrict({ ...closed, required: [] })).toBe(false);
    // A property named like a keyword is a name, not a keyword.
    expect(
      qualifiesForStrict({
        type: 'object',
        properties: { not: { type: 'string' } },
        required: ['not'],
        additionalProperties: false,
      }),
    ).toBe(true);
  });

  it('an answer in a Markdown fence is its JSON; prose around it is not', () => {
    const format = { type: 'json_schema' as const, schema: { type: 'object', required: ['a'] } };
    expect(checkAnswer(format, '```json\n{"a":1}\n```')).toEqual({
      ok: true,
      output: { a: 1 },
      text: '{"a":1}',
    });
    expect(checkAnswer(format, 'Here: {"a":1}')).toMatchObject({ ok: false });
    expect(checkAnswer(format, '{}')).toEqual({ ok: false, problem: 'a: is required' });
  });
});

describe('Anthropic structured outputs', () => {
  const request = (schema: Record<string, unknown>) => ({
    model: 'claude-test',
    messages: [
      { role: 'system' as const, content: 'Be brief.' },
      { role: 'user' as const, content: 'Rate it.' },
    ],
    tools: [],
    responseFormat: { name: 'output', schema },
  });

  it('output_config.format with every object closed', () => {
    const params = toMessageParams(
      request({ type: 'object', properties: { a: { type: 'object', properties: {} } } }),
      1024,
    );
    expect(params.output_config?.format).toEqual({
      type: 'json_schema',
      schema: {
        type: 'object',
        properties: { a: { type: 'object', properties: {}, additionalProperties: false } },
        additionalProperties: false,
      },
    });
  });

  it('a schema the SDK cannot transform is asked for in the system prompt instead', () => {
    const schema = { type: 'object', properties: { a: {} } };
    const params = toMessageParams(request(schema), 1024);
    expect(params.output_config).toBeUndefined();
    expect(params.system).toEqual([
      expect.objectContaining({ text: expect.stringContaining(JSON.stringify(schema)) as string }),
    ]);
  });
});
