import { ModelProviders } from '../../src/llm/model-providers';
import { startCore, type CoreApp } from '../support/core-app';
import { answer, ScriptedModel } from '../support/scripted-model';

/** The provider seam: a session's `model` picks a registered provider by its prefix. */

describe('ModelProviders', () => {
  const fallback = new ScriptedModel();
  const other = new ScriptedModel();
  const providers = new ModelProviders(fallback, 'gpt-4.1-mini');
  providers.register('fake', other);

  it.each([
    ['fake/small', other, 'small'],
    ['gpt-4o', fallback, 'gpt-4o'],
    // A prefix nobody registered is part of the name (OpenRouter's names look like this).
    ['openai/gpt-4o', fallback, 'openai/gpt-4o'],
  ])('serves %s by the right provider under the right name', (name, provider, model) => {
    expect(providers.resolve(name)).toEqual({ provider, model });
  });

  it('refuses a second provider for a prefix', () => {
    expect(() => providers.register('fake', new ScriptedModel())).toThrow(/claim the prefix fake/);
  });
});

describe('a session whose model names a registered provider (the real loop)', () => {
  let core: CoreApp;
  const native = new ScriptedModel();

  beforeAll(async () => {
    core = await startCore();
    core.module.get(ModelProviders).register('native', native);
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
    expect(native.requests.map((r) => r.model)).toEqual(['model-x']);
    expect(core.model.requests).toEqual([]);
  });
});
