// The bench job on LangGraph JS: the prebuilt createReactAgent (@langchain/langgraph) with ChatOpenAI
// (@langchain/openai, Chat Completions, streamed, pointed at the bench's fake upstream), the read_file
// tool, at most MAX_STEPS model calls; agent.stream(…, streamMode ["messages", "updates"]) → SSE:
// the text from the model's message chunks, the tool calls and results from the nodes' updates.
// LangSmith tracing stays off (LANGSMITH_TRACING=false, set by run.mjs).
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
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

const readFileTool = tool(async ({ path }) => readWorkspaceFile(path), {
  name: READ_FILE.name,
  description: READ_FILE.description,
  schema: z.object({
    path: z.string().describe(READ_FILE.pathDescription),
    start_line: z.number().int().min(1).optional(),
    end_line: z.number().int().min(1).optional(),
  }),
});
const agentFor = perModel((model) =>
  createReactAgent({
    llm: new ChatOpenAI({
      model,
      apiKey: API_KEY,
      configuration: { baseURL: BASE_URL },
      streaming: true,
      streamUsage: true,
      useResponsesApi: false,
    }),
    tools: [readFileTool],
    prompt: SYSTEM_PROMPT,
  }),
);
/** A model call and its tools are two super-steps of the graph; one more for the last answer. */
const RECURSION_LIMIT = 2 * MAX_STEPS + 1;

servePeer('langgraph', async ({ prompt, model, signal, send }) => {
  const stream = await agentFor(model).stream(
    { messages: [{ role: 'user', content: prompt }] },
    { streamMode: ['messages', 'updates'], signal, recursionLimit: RECURSION_LIMIT },
  );
  const usage = { inputTokens: 0, outputTokens: 0 };
  for await (const [mode, data] of stream) {
    if (mode === 'messages') {
      const [message, meta] = data;
      if (meta?.langgraph_node === 'agent' && typeof message.content === 'string' && message.content !== '')
        send('text', { delta: message.content });
      continue;
    }
    for (const [node, update] of Object.entries(data)) {
      for (const message of update?.messages ?? []) {
        if (node === 'agent') {
          for (const call of message.tool_calls ?? [])
            send('tool_call_start', {
              toolCallId: call.id,
              name: call.name,
              arguments: call.args,
              executor: 'server',
            });
          const stepUsage = message.usage_metadata;
          usage.inputTokens += stepUsage?.input_tokens ?? 0;
          usage.outputTokens += stepUsage?.output_tokens ?? 0;
          send('step_finished', { finishReason: message.response_metadata?.finish_reason, usage: stepUsage });
        } else if (node === 'tools') {
          send('tool_call_result', {
            toolCallId: message.tool_call_id,
            name: message.name,
            content: message.content,
            isError: message.status === 'error',
          });
        }
      }
    }
  }
  return usage;
});
