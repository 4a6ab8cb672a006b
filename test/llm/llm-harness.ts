import { type AppConfig, loadConfig } from '../../src/config/app-config';
import type {
  ModelMessage,
  ModelRequest,
  ModelStreamEvent,
  ModelToolCall,
} from '../../src/llm/model-provider';

export type FinishEvent = Extract<ModelStreamEvent, { type: 'finish' }>;

/** A real AppConfig pointing the OpenAI client at `baseUrl`; `env` adds or overrides variables. */
export function llmConfig(baseUrl: string, env: Record<string, string> = {}): AppConfig {
  return loadConfig(
    { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'sk-test', LLM_MAX_RETRIES: '2', ...env },
    '/tmp',
  );
}

export function userRequest(prompt: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  const messages: ModelMessage[] = [{ role: 'user', content: prompt }];
  return { model: 'test-model', messages, tools: [], ...extra };
}

export const WEATHER_TOOL = {
  name: 'weather',
  description: 'Current weather for a place',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

export interface Collected {
  events: ModelStreamEvent[];
  text: string;
  reasoning: string;
  /** The finish event, when the stream ended without throwing. */
  finish: FinishEvent | undefined;
  toolCalls: ModelToolCall[];
  /** What the stream threw, if it did (after `events` had been yielded). */
  error: unknown;
}

/** Drains a model stream, keeping everything it yielded and what it threw. */
export async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<Collected> {
  const events: ModelStreamEvent[] = [];
  let error: unknown;
  try {
    for await (const event of stream) events.push(event);
  } catch (caught) {
    error = caught;
  }
  let text = '';
  let reasoning = '';
  let finish: FinishEvent | undefined;
  for (const event of events) {
    if (event.type === 'text') text += event.delta;
    else if (event.type === 'reasoning') reasoning += event.delta;
    else if (event.type === 'finish') finish = event;
  }
  return { events, text, reasoning, finish, toolCalls: finish?.toolCalls ?? [], error };
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
