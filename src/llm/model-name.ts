/**
 * The one parser of model names. A model is named `provider/model`; a bare name is `openai/<name>`;
 * the rest after the first `/` is the provider's own name of the model (which may hold slashes of
 * its own, `openrouter/meta-llama/llama-3`).
 */
export function splitModelName(name: string): { provider: string; model: string } {
  const slash = name.indexOf('/');
  return slash < 0
    ? { provider: 'openai', model: name }
    : { provider: name.slice(0, slash), model: name.slice(slash + 1) };
}

/** A model's name written out in full (`gpt-4o` → `openai/gpt-4o`). */
export function fullModelName(name: string): string {
  const { provider, model } = splitModelName(name);
  return `${provider}/${model}`;
}
