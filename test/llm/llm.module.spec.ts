import { Test } from '@nestjs/testing';
import { ConfigModule } from '../../src/config/config.module';
import { LlmModule } from '../../src/llm/llm.module';
import { MODEL_PROVIDER, type ModelProvider } from '../../src/llm/model-provider';
import { OpenAiProvider } from '../../src/llm/providers/openai/openai.provider';
import { FakeUpstream, text } from '../support/fake-upstream';
import { collect, llmConfig, neverAborted, userRequest } from './llm-harness';

describe('LlmModule', () => {
  it('provides an OpenAiProvider built from APP_CONFIG under MODEL_PROVIDER', async () => {
    const upstream = await FakeUpstream.start();
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(llmConfig(upstream.baseUrl)), LlmModule],
    }).compile();
    try {
      const provider = moduleRef.get<ModelProvider>(MODEL_PROVIDER);
      expect(provider).toBeInstanceOf(OpenAiProvider);
      upstream.enqueue(text('via Nest'));
      expect((await collect(provider.stream(userRequest('hi'), neverAborted()))).text).toBe('via Nest');
    } finally {
      await moduleRef.close();
      await upstream.close();
    }
  });
});
