import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItem,
  ResponseInputContent,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { fileKind, textFileText } from '../../file-data';
import type { ModelMessage, ModelRequest, ModelUserPart } from '../../model-provider';
import { isReasoningModel } from '../openai/reasoning-models';
import { qualifiesForStrict } from '../openai/strict-schema';

export const OPENAI_RESPONSES = 'openai-responses';

/**
 * Our request in Responses API terms, stateless (`store: false`): the system prompt as
 * `instructions`, each answer's encrypted reasoning items (ProviderData of this provider; another
 * provider's is dropped) before its text and function calls, every call's result as a
 * `function_call_output` right after (a result's image or PDF in its `output` list). Only a model
 * that reasons (isReasoningModel; the API refuses both from any other) is asked for its encrypted
 * reasoning, and for an effort when the level is not off. A responseFormat is `text.format` `json_schema` (`strict` where the schema qualifies).
 */
export function toResponseParams(
  request: ModelRequest,
  maxOutputTokens: number,
): ResponseCreateParamsStreaming {
  const instructions = request.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const params: ResponseCreateParamsStreaming = {
    model: request.model,
    input: request.messages.flatMap(toItems),
    stream: true,
    store: false,
    max_output_tokens: maxOutputTokens,
  };
  const reasons = isReasoningModel(request.model);
  if (reasons) params.include = ['reasoning.encrypted_content'];
  if (instructions !== '') params.instructions = instructions;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((t): FunctionTool => ({
      type: 'function',
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      strict: false,
    }));
    if (request.toolChoice !== undefined) params.tool_choice = request.toolChoice;
  }
  if (reasons && request.reasoning !== undefined && request.reasoning !== 'off') {
    params.reasoning = { effort: request.reasoning, summary: 'auto' };
  }
  if (request.responseFormat !== undefined) {
    const { name, schema } = request.responseFormat;
    params.text = {
      format: { type: 'json_schema', name, schema, ...(qualifiesForStrict(schema) ? { strict: true } : {}) },
    };
  }
  return params;
}

function toItems(m: ModelMessage): ResponseInputItem[] {
  switch (m.role) {
    case 'system':
      return [];
    case 'user':
      return [{ role: 'user', content: m.parts ? m.parts.map(toInputContent) : m.content }];
    case 'tool':
      // A result's image or PDF goes in its output, a list of input contents (the API takes them there).
      return [
        {
          type: 'function_call_output',
          call_id: m.toolCallId,
          output: m.files
            ? [{ type: 'input_text', text: m.content }, ...m.files.map(toInputContent)]
            : m.content,
        },
      ];
    case 'assistant': {
      const items: ResponseInputItem[] =
        m.providerData?.provider === OPENAI_RESPONSES
          ? [...(m.providerData.items as ResponseInputItem[])]
          : [];
      if (m.content !== null && m.content !== '') items.push({ role: 'assistant', content: m.content });
      for (const call of m.toolCalls ?? []) {
        items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
      }
      return items;
    }
  }
}

/**
 * A part of a user message: an image as `input_image` (a data URL), a PDF as `input_file`
 * (`file_data` a data URL, with its name), a text file as `input_text` carrying its name.
 */
function toInputContent(part: ModelUserPart): ResponseInputContent & ResponseFunctionCallOutputItem {
  if (part.type === 'text') return { type: 'input_text', text: part.text };
  switch (fileKind(part.mediaType)) {
    case 'image':
      return {
        type: 'input_image',
        detail: 'auto',
        image_url: `data:${part.mediaType};base64,${part.data ?? ''}`,
      };
    case 'pdf':
      return {
        type: 'input_file',
        filename: part.name,
        file_data: `data:application/pdf;base64,${part.data ?? ''}`,
      };
    case 'text':
      return { type: 'input_text', text: textFileText(part) };
  }
}
