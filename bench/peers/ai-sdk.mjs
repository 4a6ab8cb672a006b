// The bench job on the Vercel AI SDK: streamText with @ai-sdk/openai's Chat Completions model (pointed
// at the bench's fake upstream), the read_file tool, at most MAX_STEPS steps; fullStream → SSE.
import { createOpenAI } from '@ai-sdk/openai';
import { stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import {
  API_KEY,
  BASE_URL,
  MAX_STEPS,
  READ_FILE,
  SYSTEM_PROMPT,
  perModel,
  readWorkspaceFile,
  servePeer,
} from './serve.mjs';

const openai = createOpenAI({ baseURL: BASE_URL, apiKey: API_KEY });
const modelFor = perModel((name) => openai.chat(name));
const tools = {
  [READ_FILE.name]: tool({
    description: READ_FILE.description,
    inputSchema: z.object({
      path: z.string().describe(READ_FILE.pathDescription),
      start_line: z.number().int().min(1).optional(),
      end_line: z.number().int().min(1).optional(),
    }),
    execute: async ({ path }) => readWorkspaceFile(path),
  }),
};

servePeer('ai-sdk', async ({ prompt, model, signal, send }) => {
  const result = streamText({
    model: modelFor(model),
    system: SYSTEM_PROMPT,
    prompt,
    tools,
    stopWhen: stepCountIs(MAX_STEPS),
    abortSignal: signal,
  });
  let usage;
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        send('text', { delta: part.text });
        break;
      case 'tool-call':
        send('tool_call_start', {
          toolCallId: part.toolCallId,
          name: part.toolName,
          arguments: part.input,
          executor: 'server',
        });
        break;
      case 'tool-result':
        send('tool_call_result', {
          toolCallId: part.toolCallId,
          name: part.toolName,
          content: part.output,
          isError: false,
        });
        break;
      case 'tool-error':
        send('tool_call_result', {
          toolCallId: part.toolCallId,
          name: part.toolName,
          content: String(part.error),
          isError: true,
        });
        break;
      case 'finish-step':
        send('step_finished', { finishReason: part.finishReason, usage: part.usage });
        break;
      case 'finish':
        usage = part.totalUsage;
        break;
      case 'error':
        throw part.error instanceof Error ? part.error : new Error(String(part.error));
      default:
        break;
    }
  }
  return usage;
});
