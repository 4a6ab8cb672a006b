import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionContentPart,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { fileKind, textFileText } from '../../file-data';
import type {
  ModelMessage,
  ModelRequest,
  ModelToolCall,
  ModelToolDefinition,
  ModelUserPart,
} from '../../model-provider';
import { takesMaxCompletionTokens } from './reasoning-models';
import { qualifiesForStrict } from './strict-schema';

/** A tool call as sent back, with the opaque provider data some upstreams require (Gemini's thought signature). */
type ToolCallParam = ChatCompletionMessageFunctionToolCall & { extra_content?: Record<string, unknown> };

/**
 * Our request in Chat Completions terms: streamed, with usage, `tools`/`tool_choice` only when there
 * are tools, and at most `maxOutputTokens` (LLM_MAX_OUTPUT_TOKENS) to produce — as `max_tokens`,
 * the name every OpenAI-compatible server knows (vLLM, Ollama, llama.cpp, LM Studio, Mistral,
 * DeepSeek, OpenRouter …; several ignore the newer `max_completion_tokens`, so their calls would go
 * unbounded), except for OpenAI's reasoning families, which refuse `max_tokens` and take
 * `max_completion_tokens` (reasoning-models.ts; OpenAI's other models take both). A responseFormat
 * is `response_format` `json_schema`, `strict` only where the schema qualifies (strict-schema.ts).
 */
export function toChatCompletionParams(
  request: ModelRequest,
  maxOutputTokens: number,
): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: toMessageParams(request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (takesMaxCompletionTokens(request.model)) params.max_completion_tokens = maxOutputTokens;
  else params.max_tokens = maxOutputTokens;
  if (request.tools.length > 0) {
    params.tools = request.tools.map(toToolParam);
    if (request.toolChoice !== undefined) params.tool_choice = request.toolChoice;
  }
  // Only when asked: many OpenAI-compatible servers refuse a parameter they do not know.
  if (request.reasoning !== undefined && request.reasoning !== 'off') {
    params.reasoning_effort = request.reasoning;
  }
  if (request.responseFormat !== undefined) {
    const { name, schema } = request.responseFormat;
    params.response_format = {
      type: 'json_schema',
      json_schema: { name, schema, ...(qualifiesForStrict(schema) ? { strict: true } : {}) },
    };
  }
  return params;
}

/** Ids of the tool calls already in the conversation, so the provider never hands out one of them again. */
export function toolCallIdsIn(messages: readonly ModelMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant' && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) ids.add(call.id);
    }
  }
  return ids;
}

/**
 * The conversation in Chat Completions terms. A tool message takes text only: a result's image or
 * PDF goes in ONE user message right after the step's tool messages — after all of them, since
 * nothing may come between an assistant's tool calls and their results — each file introduced by
 * the call it answers, and its tool message says so.
 */
function toMessageParams(messages: readonly ModelMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  let attached: ChatCompletionContentPart[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool' && m.files !== undefined) {
      out.push({ role: 'tool', tool_call_id: m.toolCallId, content: `${m.content}\n${ATTACHED_BELOW}` });
      attached.push(
        { type: 'text', text: `Attached by the tool call ${m.toolCallId}:` },
        ...m.files.map(toContentPart),
      );
    } else {
      out.push(toMessageParam(m));
    }
    if (attached.length > 0 && messages[i + 1]?.role !== 'tool') {
      out.push({ role: 'user', content: attached });
      attached = [];
    }
  }
  return out;
}

/** What a tool message whose result carries a file says of it (the file follows in a user message). */
const ATTACHED_BELOW = '[The file is attached below, in the user message after the tool results.]';

function toMessageParam(message: ModelMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return message.parts
        ? { role: 'user', content: message.parts.map(toContentPart) }
        : { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant': {
      const calls = message.toolCalls;
      if (calls === undefined || calls.length === 0)
        return { role: 'assistant', content: message.content ?? '' };
      // "" next to tool calls becomes null: Anthropic-backed gateways reject empty text blocks.
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map(toToolCallParam),
      };
    }
  }
}

/**
 * A part of a user message: an image as an `image_url` part with a data URL, a PDF as a `file` part
 * (`file_data` a data URL, with its name), a text file as a text part carrying its name.
 */
export function toContentPart(part: ModelUserPart): ChatCompletionContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  switch (fileKind(part.mediaType)) {
    case 'image':
      return { type: 'image_url', image_url: { url: `data:${part.mediaType};base64,${part.data ?? ''}` } };
    case 'pdf':
      return {
        type: 'file',
        file: { filename: part.name, file_data: `data:application/pdf;base64,${part.data ?? ''}` },
      };
    case 'text':
      return { type: 'text', text: textFileText(part) };
  }
}

function toToolCallParam(call: ModelToolCall): ToolCallParam {
  const param: ToolCallParam = {
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: sendableArguments(call.arguments) },
  };
  if (call.extraContent !== undefined) param.extra_content = call.extraContent;
  return param;
}

/**
 * Servers that render history through a template (vLLM) or translate it (Anthropic gateways) parse
 * the arguments and reject the whole request when they are not a JSON object. The usual culprits are
 * a no-argument call's "" and JSON cut off by a length limit; those go back as "{}" (the tool result
 * already told the model what was wrong).
 */
function sendableArguments(text: string): string {
  const trimmed = text.trim();
  return trimmed.startsWith('{') && trimmed.endsWith('}') ? text : '{}';
}

function toToolParam(tool: ModelToolDefinition): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}
