/**
 * What the real APIs refuse in images and documents, for the fakes ("Attachments"): a part of a
 * type the API does not know, in a message whose role cannot hold it, base64 that is not base64,
 * or bytes that are not the media type the part names ("Image does not match the provided media
 * type"). Each function answers the refusal's message, or undefined.
 */

const MAGIC: Record<string, (b: Buffer) => boolean> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8,
  'image/gif': (b) => b.subarray(0, 4).toString('latin1') === 'GIF8',
  'image/webp': (b) =>
    b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  'application/pdf': (b) => b.subarray(0, 5).toString('latin1') === '%PDF-',
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Why `data` (base64) is not a `mediaType` the API takes, or undefined. */
export function base64Refusal(data: unknown, mediaType: string, where: string): string | undefined {
  const magic = MAGIC[mediaType];
  if (!magic) return `${where}: media type ${mediaType} is not supported`;
  if (typeof data !== 'string' || data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) {
    return `${where}: invalid base64 data`;
  }
  if (!magic(Buffer.from(data, 'base64')))
    return `${where}: the data does not match the provided media type ${mediaType}`;
  return undefined;
}

/** Why a data URL is refused, or undefined; `kinds` the media types allowed there. */
export function dataUrlRefusal(url: unknown, kinds: readonly string[], where: string): string | undefined {
  if (typeof url !== 'string') return `${where}: expected a string`;
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!m) return `${where}: expected a data URL (data:<type>;base64,…)`;
  if (!kinds.includes(m[1])) return `${where}: media type ${m[1]} is not supported here`;
  return base64Refusal(m[2], m[1], where);
}

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

type Loose = Record<string, unknown>;

/**
 * Chat Completions: an assistant's `tool_calls` answered by tool messages right after it, one for
 * each call, before any other message (a user message between them is refused), and no tool
 * message that answers no call.
 */
export function chatCompletionsToolPairingRefusal(messages: readonly Loose[]): string | undefined {
  let open: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      const id = String(m.tool_call_id);
      if (!open.includes(id)) {
        return `messages[${i}]: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      }
      open = open.filter((o) => o !== id);
      continue;
    }
    if (open.length > 0) {
      return `messages[${i}]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`;
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      open = (m.tool_calls as Loose[]).map((c) => String(c.id));
    }
  }
  return open.length > 0
    ? `messages: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`
    : undefined;
}

/** Chat Completions: a user message's content parts (text, image_url, file); other roles take text only. */
export function chatCompletionsPartsRefusal(messages: readonly Loose[]): string | undefined {
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of (m.content as Loose[]).entries()) {
      const where = `messages[${i}].content[${j}]`;
      if (part.type === 'text') {
        if (typeof part.text !== 'string') return `${where}.text: expected a string`;
        continue;
      }
      if (m.role !== 'user')
        return `${where}: Invalid value: '${String(part.type)}'. Supported values are: 'text'.`;
      if (part.type === 'image_url') {
        const refused = dataUrlRefusal(
          (part.image_url as Loose | undefined)?.url,
          IMAGE_TYPES,
          `${where}.image_url.url`,
        );
        if (refused) return refused;
      } else if (part.type === 'file') {
        const file = (part.file ?? {}) as Loose;
        if (file.file_id === undefined) {
          const refused = dataUrlRefusal(file.file_data, ['application/pdf'], `${where}.file.file_data`);
          if (refused) return refused;
          if (typeof file.filename !== 'string') return `${where}.file.filename: required with file_data`;
        }
      } else {
        return `${where}: Invalid value: '${String(part.type)}'. Supported values are: 'text', 'image_url', 'input_audio', 'file'.`;
      }
    }
  }
  return undefined;
}

/** Anthropic Messages: `image` and `document` blocks (base64 sources) only in user turns. */
export function anthropicBlockRefusal(role: string, block: Loose, where: string): string | undefined {
  if (block.type !== 'image' && block.type !== 'document') return undefined;
  if (role !== 'user') return `${where}: ${String(block.type)} blocks are only allowed in user messages`;
  const source = (block.source ?? {}) as Loose;
  if (source.type !== 'base64') return `${where}.source.type: expected base64`;
  const kinds = block.type === 'image' ? IMAGE_TYPES : ['application/pdf'];
  if (!kinds.includes(String(source.media_type))) {
    return `${where}.source.media_type: Input should be ${kinds.map((k) => `'${k}'`).join(', ')}`;
  }
  return base64Refusal(source.data, String(source.media_type), `${where}.source.data`);
}

/**
 * Responses: `input_image` (with `detail`) and `input_file` content in user input items, and in a
 * `function_call_output`'s `output` when it is a list (input_text, input_image — whose `detail`
 * may be left out there, as the SDK's type says —, input_file).
 */
export function responsesContentRefusal(items: readonly Loose[]): string | undefined {
  for (const [i, item] of items.entries()) {
    const output = item.type === 'function_call_output';
    if (output && !Array.isArray(item.output) && typeof item.output !== 'string') {
      return `input[${i}].output: expected a string or a list of input contents`;
    }
    const content = output ? item.output : item.content;
    if (!Array.isArray(content)) continue;
    for (const [j, part] of (content as Loose[]).entries()) {
      const where = output ? `input[${i}].output[${j}]` : `input[${i}].content[${j}]`;
      if (part.type === 'input_text' || (!output && part.type === 'output_text')) continue;
      if (!output && item.role !== 'user')
        return `${where}: Invalid value: '${String(part.type)}' for role ${String(item.role)}.`;
      if (part.type === 'input_image') {
        const detail = output && part.detail === undefined ? 'auto' : part.detail;
        if (!['low', 'high', 'auto', 'original'].includes(String(detail))) return `${where}.detail: required`;
        const refused = dataUrlRefusal(part.image_url, IMAGE_TYPES, `${where}.image_url`);
        if (refused) return refused;
      } else if (part.type === 'input_file') {
        const refused = dataUrlRefusal(part.file_data, ['application/pdf'], `${where}.file_data`);
        if (refused) return refused;
        if (typeof part.filename !== 'string') return `${where}.filename: required with file_data`;
      } else {
        return `${where}: Invalid value: '${String(part.type)}'.`;
      }
    }
  }
  return undefined;
}
