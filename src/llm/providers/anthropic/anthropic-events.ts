import { stringifyJson } from '../../../common/json-depth';
import type { ModelStreamEvent, Usage } from '../../model-provider';
import type { StreamReading } from '../../stream-reading';
import type { WireChunk, WireUsage } from '../../wire-chunk';
import { count, hasKeys, isObject, length, nonEmpty } from '../../wire-values';

/**
 * Anthropic's Messages events as one call's ModelStreamEvents — the anthropic provider's dialect
 * (its answers, and a gateway's that passes them on through the `openai` provider). The shared
 * writer keeps the bounds: thinking signatures and redacted data count as opaque provider state.
 */
export function readAnthropicEvent(
  type: string,
  c: WireChunk,
  reading: StreamReading,
  out: ModelStreamEvent[],
): void {
  const writer = reading.writer;
  switch (type) {
    case 'message_start': {
      const message = isObject(c.message) ? (c.message as { id?: unknown; usage?: unknown }) : undefined;
      reading.responseId(message?.id);
      if (isObject(message?.usage)) anthropicUsage(reading.usage, message.usage);
      return;
    }
    case 'content_block_start': {
      if (!isObject(c.content_block)) return;
      const block = c.content_block as WireContentBlock;
      if (block.type === 'tool_use') {
        // `input` is `{}` when the arguments stream as input_json_delta; a gateway might put them all here instead.
        const preset = isObject(block.input) && hasKeys(block.input) ? stringifyJson(block.input) : undefined;
        writer.toolCallStart(blockIndex(c), nonEmpty(block.id), nonEmpty(block.name), preset, out);
      } else if (block.type === 'text') {
        const text = nonEmpty(block.text);
        if (text !== undefined) writer.text(text, out);
      } else if (block.type === 'thinking') {
        writer.providerData(length(block.signature));
        const thinking = nonEmpty(block.thinking);
        if (thinking !== undefined) writer.reasoning(thinking, out);
      } else if (block.type === 'redacted_thinking') {
        writer.providerData(length(block.data));
      }
      return;
    }
    case 'content_block_delta': {
      if (!isObject(c.delta)) return;
      const delta = c.delta as WireBlockDelta;
      if (delta.type === 'text_delta') {
        const text = nonEmpty(delta.text);
        if (text !== undefined) writer.text(text, out);
      } else if (delta.type === 'input_json_delta') {
        if (typeof delta.partial_json !== 'string') return;
        writer.toolCallArguments(blockIndex(c), delta.partial_json, out);
      } else if (delta.type === 'thinking_delta') {
        const thinking = nonEmpty(delta.thinking);
        if (thinking !== undefined) writer.reasoning(thinking, out);
      } else if (delta.type === 'signature_delta') {
        writer.providerData(length(delta.signature));
      }
      return;
    }
    case 'message_delta': {
      if (isObject(c.delta)) {
        const reason = nonEmpty((c.delta as WireBlockDelta).stop_reason);
        if (reason !== undefined) reading.finishWith(reason);
      }
      if (isObject(c.usage)) anthropicUsage(reading.usage, c.usage);
      return;
    }
    case 'message_stop':
      // A clean end even if no stop_reason came.
      reading.finishIfUnset();
      return;
    default:
      // ping, content_block_stop, and event types added after this was written.
      return;
  }
}

/**
 * Input (with cached input) comes in message_start and may be repeated in message_delta; output is
 * cumulative in message_delta. The prompt is the three input counts together; the cache's read and
 * written parts are also reported apart.
 */
function anthropicUsage(into: Usage, usage: WireUsage): void {
  if (typeof usage.input_tokens === 'number') {
    into.promptTokens =
      usage.input_tokens + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
  }
  if (typeof usage.output_tokens === 'number') into.completionTokens = usage.output_tokens;
  if (typeof usage.cache_read_input_tokens === 'number') {
    into.cacheReadTokens = usage.cache_read_input_tokens;
  }
  if (typeof usage.cache_creation_input_tokens === 'number') {
    into.cacheWriteTokens = usage.cache_creation_input_tokens;
  }
}

function blockIndex(c: WireChunk): number {
  return typeof c.index === 'number' ? c.index : -1;
}

/** A content block as `content_block_start` carries it. */
interface WireContentBlock {
  type?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  text?: unknown;
  thinking?: unknown;
  signature?: unknown;
  /** redacted_thinking's opaque payload. */
  data?: unknown;
}

/** A `content_block_delta`'s or `message_delta`'s delta. */
interface WireBlockDelta {
  type?: unknown;
  text?: unknown;
  partial_json?: unknown;
  thinking?: unknown;
  signature?: unknown;
  stop_reason?: unknown;
}
