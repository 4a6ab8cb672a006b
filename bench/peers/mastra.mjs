// The bench job on Mastra: an Agent (@mastra/core) with the same @ai-sdk/openai Chat Completions model
// (pointed at the bench's fake upstream), the read_file tool, at most MAX_STEPS steps, no memory;
// agent.stream(…).fullStream → SSE. Mastra's telemetry is off (MASTRA_TELEMETRY_DISABLED, set by run.mjs).
import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
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
const readFileTool = createTool({
  id: READ_FILE.name,
  description: READ_FILE.description,
  inputSchema: z.object({
    path: z.string().describe(READ_FILE.pathDescription),
    start_line: z.number().int().min(1).optional(),
    end_line: z.number().int().min(1).optional(),
  }),
  execute: async ({ path }) => readWorkspaceFile(path),
});
const agentFor = perModel(
  (model) =>
    new Agent({
      id: 'bench',
      name: 'bench',
      instructions: SYSTEM_PROMPT,
      model: openai.chat(model),
      tools: { [READ_FILE.name]: readFileTool },
    }),
);

servePeer('mastra', async ({ prompt, model, signal, send }) => {
  const output = await agentFor(model).stream(prompt, { maxSteps: MAX_STEPS, abortSignal: signal });
  let usage;
  for await (const chunk of output.fullStream) {
    const p = chunk.payload;
    switch (chunk.type) {
      case 'text-delta':
        send('text', { delta: p.text });
        break;
      case 'tool-call':
        send('tool_call_start', {
          toolCallId: p.toolCallId,
          name: p.toolName,
          arguments: p.args,
          executor: 'server',
        });
        break;
      case 'tool-result':
        send('tool_call_result', {
          toolCallId: p.toolCallId,
          name: p.toolName,
          content: p.result,
          isError: p.isError === true,
        });
        break;
      case 'tool-error':
        send('tool_call_result', {
          toolCallId: p.toolCallId,
          name: p.toolName,
          content: String(p.error),
          isError: true,
        });
        break;
      case 'step-finish':
        send('step_finished', { finishReason: p.stepResult?.reason, usage: p.output?.usage });
        break;
      case 'finish':
        usage = p.output?.usage;
        break;
      case 'error':
        throw p.error instanceof Error ? p.error : new Error(String(p.error));
      default:
        break;
    }
  }
  return usage;
});
