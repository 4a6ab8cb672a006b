/**
 * Whether an OpenAI model reasons, told by its id (a router's `vendor/` prefix ignored): the
 * o-series (`o1`, `o3-mini`, `o4-mini` …), `gpt-5*` and `codex*` — except the `-chat` variants
 * (`gpt-5-chat-latest`), which do not. Only these take what belongs to reasoning, and the real API
 * refuses it from any other model (gpt-4o*, gpt-4.1*, and every model it does not know as one of
 * these): `include: ["reasoning.encrypted_content"]` ("Encrypted content is not supported with
 * this model") and `reasoning.effort` on the Responses API.
 * A reasoning model this rule does not know is asked for nothing of the kind: it still answers
 * (reasoning at its default effort), where the opposite mistake would be a 400 on every call.
 */
export function isReasoningModel(model: string): boolean {
  const name = modelName(model);
  return REASONING_MODEL_ID.test(name) && !CHAT_VARIANT.test(name);
}

/**
 * Whether Chat Completions must limit the model's output with `max_completion_tokens`: OpenAI's
 * reasoning families refuse `max_tokens` ("Use 'max_completion_tokens' instead") — their `-chat`
 * variants too, to be safe, as OpenAI takes `max_completion_tokens` from every model it serves.
 */
export function takesMaxCompletionTokens(model: string): boolean {
  return REASONING_MODEL_ID.test(modelName(model));
}

function modelName(model: string): string {
  return model.slice(model.lastIndexOf('/') + 1).toLowerCase();
}

const REASONING_MODEL_ID = /^(?:o\d+(?:-|$)|gpt-5(?:[.-]|$)|codex(?:-|$))/;
const CHAT_VARIANT = /-chat(?:-|$)/;
