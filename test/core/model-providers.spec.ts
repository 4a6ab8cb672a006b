import { ConfigError, loadConfig } from '../../src/config/app-config';
import { ModelError, type ModelStreamEvent } from '../../src/llm/model-provider';
import { ModelProviders } from '../../src/llm/model-providers.service';
import { collect } from '../llm/llm-harness';
import { startCore, type CoreApp } from '../support/core-app';
import { answer, fail, ScriptedModel } from '../support/scripted-model';

/** The provider seam: `provider/model` names, the allow-list, fallbacks and the limits every call is held to. */

function config(env: Record<string, string> = {}) {
  return loadConfig({ OPENAI_API_KEY: 'k', ...env }, '/tmp');
}

function providers(env: Record<string, string>, list: Record<string, ScriptedModel>): ModelProviders {
  return new ModelProviders(
    config(env),
    Object.entries(list).map(([name, provider]) => ({ name, provider, baseUrl: `http://${name}.test` })),
  );
}

const request = (model: string) => ({
  model,
  messages: [{ role: 'user' as const, content: 'hi' }],
  tools: [],
});

describe('ModelProviders', () => {
  it.each([
    ['fake/small', 'fake', 'small'],
    ['gpt-4o', 'openai', 'gpt-4o'],
    // A router's vendor/model is written openai/vendor/model: the OpenAI-compatible server gets vendor/model.
    ['openai/meta/llama-3', 'openai', 'meta/llama-3'],
  ])('serves %s by the right provider under the right name', (name, provider, model) => {
    const all = { openai: new ScriptedModel(), fake: new ScriptedModel() };
    const resolved = providers({}, all).resolve(name);
    expect(resolved.provider).toBe(all[provider as keyof typeof all]);
    expect(resolved.model).toBe(model);
  });

  it('refuses a model whose prefix names no configured provider, never sending it to OpenAI', () => {
    const p = providers({}, { openai: new ScriptedModel() });
    expect(p.problem('anthropic/claude-sonnet-4-5')).toMatch(/anthropic is not a configured model provider/);
    expect(p.problem('opnai/gpt-4o')).toMatch(/opnai is not a configured model provider/);
    expect(p.problem('gpt-4o')).toBeUndefined();
  });

  it('holds sessions to LLM_MODELS: provider/model and provider/* entries', () => {
    const p = providers(
      { LLM_MODELS: 'openai/gpt-4o,fake/*' },
      { openai: new ScriptedModel(), fake: new ScriptedModel() },
    );
    expect(p.problem('gpt-4o')).toBeUndefined();
    expect(p.problem('fake/anything')).toBeUndefined();
    expect(p.problem('openai/gpt-4.1')).toMatch(/not one of LLM_MODELS/);
  });

  it('stops start-up on an LLM_MODEL or LLM_FALLBACK_MODELS entry of an unconfigured provider', () => {
    const openai = { openai: new ScriptedModel() };
    expect(() => providers({ LLM_MODEL: 'anthropic/claude' }, openai)).toThrow(ConfigError);
    expect(() => providers({ LLM_MODEL: 'anthropic/claude' }, openai)).toThrow(/LLM_MODEL/);
    expect(() => providers({ LLM_FALLBACK_MODELS: 'gpt-4o,nobody/x' }, openai)).toThrow(
      /LLM_FALLBACK_MODELS/,
    );
  });

  it('sends a call that fails retryably before its first event to the next fallback, and names who answered', async () => {
    const first = new ScriptedModel();
    const second = new ScriptedModel();
    first.enqueue(fail(new ModelError('UPSTREAM_UNAVAILABLE', 'overloaded', true, 529)));
    second.enqueue(answer('from the fallback'));
    // No retry of the first model before it (retry-policy.spec.ts has the retries).
    const p = providers(
      { LLM_FALLBACK_MODELS: 'second/m2', LLM_MAX_RETRIES: '0' },
      { openai: first, second },
    );
    const result = await collect(p.stream(request('gpt-4o'), new AbortController().signal));
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('from the fallback');
    expect(result.finish?.model).toBe('second/m2');
    expect(second.requests.map((r) => r.model)).toEqual(['m2']);
  });

  it('gives a fallback the registry knows takes no images a note in place of each image', async () => {
    const first = new ScriptedModel();
    const second = new ScriptedModel();
    first.enqueue(fail(new ModelError('UPSTREAM_UNAVAILABLE', 'overloaded', true, 529)));
    second.enqueue(answer('I am told of a picture'));
    const p = providers(
      { LLM_FALLBACK_MODELS: 'second/gpt-3.5-turbo', LLM_MAX_RETRIES: '0' },
      { openai: first, second },
    );
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const withImage = {
      ...request('gpt-4o'),
      messages: [
        {
          role: 'user' as const,
          content: 'What is this?',
          parts: [
            { type: 'text' as const, text: 'What is this?' },
            {
              type: 'file' as const,
              name: 'shot.png',
              mediaType: 'image/png',
              load: () => Promise.resolve(png),
            },
          ],
        },
      ],
    };
    const result = await collect(p.stream(withImage, new AbortController().signal));
    expect(result.text).toBe('I am told of a picture');
    // The model named got the image; the fallback, which takes none, a note.
    expect(first.requests[0].messages[0]).toMatchObject({
      parts: [{ type: 'text' }, { type: 'file', data: png.toString('base64') }],
    });
    expect(second.requests[0].messages[0]).toMatchObject({
      parts: [
        { type: 'text', text: 'What is this?' },
        { type: 'text', text: expect.stringContaining('"shot.png" (image/png) is not shown') },
      ],
    });
  });

  it('never sends a call that has streamed anything elsewhere', async () => {
    const first = new ScriptedModel();
    const second = new ScriptedModel();
    first.enqueue(fail(new ModelError('UPSTREAM_CONNECTION', 'reset', true), 'half an'));
    const p = providers({ LLM_FALLBACK_MODELS: 'second/m2' }, { openai: first, second });
    const result = await collect(p.stream(request('gpt-4o'), new AbortController().signal));
    expect(result.text).toBe('half an');
    expect(result.error).toMatchObject({ code: 'UPSTREAM_CONNECTION' });
    expect(second.requests).toEqual([]);
  });

  it('does not fall back on an error that is not retryable', async () => {
    const first = new ScriptedModel();
    const second = new ScriptedModel();
    first.enqueue(fail(new ModelError('UPSTREAM_BAD_REQUEST', 'bad', false, 400)));
    const p = providers({ LLM_FALLBACK_MODELS: 'second/m2' }, { openai: first, second });
    const result = await collect(p.stream(request('gpt-4o'), new AbortController().signal));
    expect(result.error).toMatchObject({ code: 'UPSTREAM_BAD_REQUEST' });
    expect(second.requests).toEqual([]);
  });

  it('cuts any provider at ANSWER_MAX_BYTES: a character boundary, then length without tool calls', async () => {
    const model = new ScriptedModel();
    model.enqueue(async function* (): AsyncGenerator<ModelStreamEvent> {
      yield { type: 'text', delta: 'abc€' };
      yield { type: 'text', delta: 'never' };
      yield {
        type: 'finish',
        finishReason: 'tool_calls',
        usage: { promptTokens: 1, completionTokens: 1 },
        toolCalls: [{ id: 'c', name: 'x', arguments: '{}' }],
      };
    });
    const p = providers({ ANSWER_MAX_BYTES: '5' }, { openai: model });
    const result = await collect(p.stream(request('m'), new AbortController().signal));
    expect(result.text).toBe('abc');
    expect(result.finish).toMatchObject({ finishReason: 'length', toolCalls: [] });
  });

  it('times out any provider that stays silent for LLM_IDLE_TIMEOUT_MS, aborting its request', async () => {
    const model = new ScriptedModel();
    let aborted = false;
    model.enqueue(async function* (_request, signal): AsyncGenerator<ModelStreamEvent> {
      yield { type: 'text', delta: 'Hel' };
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
      throw signal.reason;
    });
    const p = providers({ LLM_IDLE_TIMEOUT_MS: '1000' }, { openai: model });
    const result = await collect(p.stream(request('m'), new AbortController().signal));
    expect(result.text).toBe('Hel');
    expect(result.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
    expect(aborted).toBe(true);
  });
});

describe('a session whose model names a registered provider (the real loop)', () => {
  let core: CoreApp;
  const native = new ScriptedModel();

  beforeAll(async () => {
    core = await startCore();
    core.module.get(ModelProviders).register('native', native, 'http://native.test');
  });
  afterAll(() => core?.close());

  it('is answered by that provider, which gets the model name without the prefix', async () => {
    native.enqueue(answer('from ', 'the native provider'));
    const { runId } = await core.runs.start('local', {
      prompt: 'hi',
      session: { model: 'native/model-x', tools: [] },
    });
    const events = await core.follow(runId);
    expect(events.at(-1)!.type).toBe('done');
    const step = events.find((e) => e.type === 'step_finished')!;
    expect(JSON.parse(step.data)).toMatchObject({ model: 'native/model-x' });
    expect(native.requests.map((r) => r.model)).toEqual(['model-x']);
    expect(core.model.requests).toEqual([]);
  });

  it('refuses a session naming an unconfigured provider with a 400 naming model', async () => {
    await expect(
      core.runs.start('local', { prompt: 'hi', session: { model: 'anthropic/claude-x', tools: [] } }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/^model "anthropic\/claude-x" is not accepted/),
    });
  });
});
