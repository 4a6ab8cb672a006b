import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import type {
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  JSONOutputFormat,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { fileKind, textFileText } from '../../file-data';
import type { ModelMessage, ModelRequest, ModelUserPart, ReasoningLevel } from '../../model-provider';

export const ANTHROPIC = 'anthropic';

/** Thinking budgets per LLM_REASONING level (the API takes at least 1024, below max_tokens). */
const THINKING_BUDGET: Record<Exclude<ReasoningLevel, 'off'>, number> = {
  low: 2048,
  medium: 8192,
  high: 24_576,
};
const MIN_THINKING_BUDGET = 1024;
/** Thinking may take at most this share of max_tokens: the answer keeps the rest. */
const THINKING_MAX_SHARE = 0.5;

const CACHE = { type: 'ephemeral' } as const;

/**
 * Our request in Messages API terms: the system prompt apart, tool results as `tool_result` blocks
 * in the user turn right after their `tool_use` (consecutive tool messages one turn; a result's
 * image or PDF as a block inside its `tool_result`), the thinking
 * blocks of earlier answers sent back unchanged (ProviderData of this provider; another provider's
 * is dropped), and cache breakpoints on the tools, the system prompt and the newest message — so
 * each call reads the prefix the one before it wrote. A responseFormat is `output_config.format`.
 */
export function toMessageParams(request: ModelRequest, maxTokens: number): MessageCreateParamsStreaming {
  const format = request.responseFormat && outputFormat(request.responseFormat.schema);
  const system = [
    ...request.messages.filter((m) => m.role === 'system').map((m) => m.content),
    // A schema the API cannot take (outputFormat): asked for in words, checked by the server.
    ...(request.responseFormat && !format ? [formatInstruction(request.responseFormat.schema)] : []),
  ].join('\n\n');
  const messages = toMessages(request.messages);
  markNewest(messages);
  const params: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: maxTokens,
    messages,
    stream: true,
  };
  if (hasVisibleText(system)) params.system = [{ type: 'text', text: system, cache_control: CACHE }];
  if (request.tools.length > 0) {
    const tools: Tool[] = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      // Keys in one order whatever the schema went through (jsonb reorders a stored client tool's):
      // the cache is matched byte for byte, so a reordered schema would miss it after every wait.
      input_schema: sortedKeys({ type: 'object', ...t.parameters }) as Tool['input_schema'],
    }));
    tools[tools.length - 1].cache_control = CACHE;
    params.tools = tools;
    params.tool_choice = { type: request.toolChoice === 'none' ? 'none' : 'auto' };
  }
  if (format) params.output_config = { format };
  const budget = thinkingBudget(request.reasoning, maxTokens);
  if (budget !== undefined && thinkingMayStart(request.messages)) {
    params.thinking = { type: 'enabled', budget_tokens: budget };
  }
  return params;
}

/**
 * A responseFormat as Anthropic's structured outputs (`output_config.format`), through the SDK's
 * own transformJSONSchema: every object closed (the API requires `additionalProperties: false`),
 * the constraints it does not take (lengths, ranges, most formats) moved into descriptions — the
 * server's check of the answer still holds the model to them. Undefined for a schema it cannot
 * transform (a subschema without a type): then the system prompt asks for the JSON instead.
 */
function outputFormat(schema: Record<string, unknown>): JSONOutputFormat | undefined {
  try {
    return { type: 'json_schema', schema: transformJSONSchema(schema) };
  } catch {
    return undefined;
  }
}

function formatInstruction(schema: Record<string, unknown>): string {
  return `Your final answer must be only a JSON value, with nothing around it, valid against this JSON Schema: ${JSON.stringify(schema)}`;
}

/**
 * The level's budget, at most half of max_tokens so the answer keeps the other half; none when
 * that half cannot hold the API's minimum of 1024 (max_tokens under 2048): then the call goes
 * without thinking rather than with an answer squeezed into a few tokens.
 */
function thinkingBudget(level: ReasoningLevel | undefined, maxTokens: number): number | undefined {
  if (level === undefined || level === 'off') return undefined;
  const budget = Math.min(THINKING_BUDGET[level], Math.floor(maxTokens * THINKING_MAX_SHARE));
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

/**
 * With thinking on, an answer that continues a tool loop must start with the thinking block that
 * asked for those tools. When the loop's assistant turn has none (another provider answered it, or
 * thinking was off), this call goes without thinking rather than be refused.
 */
function thinkingMayStart(messages: readonly ModelMessage[]): boolean {
  const last = messages[messages.length - 1];
  if (last?.role !== 'tool') return true;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'assistant') return ownThinking(m) !== undefined;
  }
  return true;
}

function ownThinking(m: Extract<ModelMessage, { role: 'assistant' }>): ContentBlockParam[] | undefined {
  const data = m.providerData;
  if (data?.provider !== ANTHROPIC || data.items.length === 0) return undefined;
  return data.items as ContentBlockParam[];
}

function toMessages(conversation: readonly ModelMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  const toolUseId = toolUseIds();
  // Blocks join the previous turn when it has the same role (tool results, then a prompt).
  const add = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of conversation) {
    switch (m.role) {
      case 'system':
        break;
      case 'user':
        add(
          'user',
          m.parts ? userBlocks(m.parts) : [text(hasVisibleText(m.content) ? m.content : EMPTY_PROMPT)],
        );
        break;
      case 'tool':
        add('user', [
          {
            type: 'tool_result',
            tool_use_id: toolUseId(m.toolCallId),
            content: m.files ? toolResultContent(m.content, m.files) : m.content,
          },
        ]);
        break;
      case 'assistant': {
        // The API refuses a text block without visible text (`"\n\n"` beside a tool_use): never sent.
        const blocks: ContentBlockParam[] = [];
        if (m.content !== null && hasVisibleText(m.content)) blocks.push(text(m.content));
        for (const call of m.toolCalls ?? []) {
          blocks.push({
            type: 'tool_use',
            id: toolUseId(call.id),
            name: call.name,
            input: toolInput(call.arguments),
          });
        }
        // An answer with nothing to show is left out (the turns around it join): its thinking, if
        // any, went back only to continue a tool loop, which an answer without calls does not.
        if (blocks.length > 0) add('assistant', [...(ownThinking(m) ?? []), ...blocks]);
        break;
      }
    }
  }
  // The Messages API takes a conversation that opens with the user. One whose older part a summary
  // stands in for ("Long sessions") may open with an answer: the summary is in the system prompt, and
  // this turn — on the wire only, never stored — says so.
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: [text(SUMMARY_OPENING)] });
  return out;
}

/** The user turn that opens a conversation whose start a summary (in the system prompt) stands in for. */
const SUMMARY_OPENING = '(The earlier conversation is summarized in the system prompt.)';
/** A prompt with no visible text, as the API takes it (dropping it could end the conversation on an answer). */
const EMPTY_PROMPT = '(empty message)';

const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * Call ids as the Messages API takes them (`^[a-zA-Z0-9_-]+$`), one-to-one within the request: an
 * id that matches is kept; another provider's (such as `functions.get_weather:0`) has each other
 * character replaced by `_`; either, when already taken by an earlier id (`call.7` then `call_7`),
 * gets the first free `_2`, `_3`… suffix. Ids are assigned in conversation order, so a call and its
 * result get the same one, and a longer conversation maps its older ids as the shorter one did
 * (the cached prefix stays the same).
 */
function toolUseIds(): (id: string) => string {
  const mapped = new Map<string, string>();
  const taken = new Set<string>();
  return (id) => {
    let wire = mapped.get(id);
    if (wire !== undefined) return wire;
    const base = TOOL_USE_ID.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
    wire = base;
    for (let n = 2; taken.has(wire); n++) wire = `${base}_${n}`;
    mapped.set(id, wire);
    taken.add(wire);
    return wire;
  };
}

function hasVisibleText(content: string): boolean {
  return /\S/.test(content);
}

/** `value` with every object's keys in sorted order, recursively. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return out;
}

/**
 * A user message with files: images as `image` blocks and PDFs as `document` blocks (base64, the
 * PDF titled with its name), text files as text blocks carrying their name; text parts without
 * visible text are left out (the API refuses them).
 */
function userBlocks(parts: readonly ModelUserPart[]): ContentBlockParam[] {
  const blocks = partBlocks(parts);
  return blocks.length > 0 ? blocks : [text(EMPTY_PROMPT)];
}

/** A tool result that carries files: its text, then its files as blocks inside the `tool_result`. */
function toolResultContent(
  content: string,
  files: readonly ModelUserPart[],
): ToolResultBlockParam['content'] {
  const blocks = partBlocks([{ type: 'text', text: content }, ...files]);
  return blocks.length > 0 ? blocks : content;
}

function partBlocks(
  parts: readonly ModelUserPart[],
): (TextBlockParam | ImageBlockParam | DocumentBlockParam)[] {
  const blocks: (TextBlockParam | ImageBlockParam | DocumentBlockParam)[] = [];
  for (const part of parts) {
    if (part.type === 'text') {
      if (hasVisibleText(part.text)) blocks.push(text(part.text));
      continue;
    }
    const data = part.data ?? '';
    switch (fileKind(part.mediaType)) {
      case 'image':
        blocks.push({
          type: 'image',
          source: { type: 'base64', media_type: part.mediaType as ImageMediaType, data },
        });
        break;
      case 'pdf':
        blocks.push({
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data },
          title: part.name,
        });
        break;
      case 'text':
        blocks.push(text(textFileText(part)));
        break;
    }
  }
  return blocks;
}

type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** A text block; callers send only text with a visible character (the API refuses any other). */
function text(content: string): TextBlockParam {
  return { type: 'text', text: content };
}

/** The arguments as the object `tool_use.input` must be; broken ones (the tool said so) as `{}`. */
function toolInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return {};
}

/** The newest message's last block is the conversation's cache breakpoint. */
function markNewest(messages: MessageParam[]): void {
  const last = messages[messages.length - 1];
  if (last === undefined || !Array.isArray(last.content)) return;
  const block = last.content[last.content.length - 1];
  if (block !== undefined && block.type !== 'thinking' && block.type !== 'redacted_thinking') {
    (block as { cache_control?: typeof CACHE }).cache_control = CACHE;
  }
}
