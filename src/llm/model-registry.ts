import { resolveModel } from 'tokenlens';
import { splitModelName } from './model-name';
import { providerDefinition } from './providers';

/* What the model registry (tokenlens) knows of a model: whether it takes images, its window. */

/** The registry's (tokenlens) ids to try for `provider/model`, most specific first. */
function registryIds(model: string): string[] {
  const { provider, model: own } = splitModelName(model);
  // The registry's name is the last segment of the provider's own (`meta-llama/llama-3` → `llama-3`).
  const name = own.slice(own.lastIndexOf('/') + 1);
  const registryProvider = providerDefinition(provider)?.ids.contextWindow;
  return [...(registryProvider ? [`${registryProvider}:${name}`] : []), name, name.replace(/-\d{8}$/, '')];
}

/**
 * Whether the registry says `provider/model` takes images (and so PDFs, which every provider reads
 * through its vision: "Attachments"); null for a model it does not know, which is assumed to.
 */
export function registryTakesImages(model: string): boolean | null {
  for (const id of registryIds(model)) {
    const modalities = resolveModel(id)?.modalities;
    if (modalities) return modalities.imageIn === true;
  }
  return null;
}

/** The window the registry (tokenlens) gives for `provider/model`, or null for a model it does not know. */
export function registryWindow(model: string): number | null {
  for (const id of registryIds(model)) {
    const found = resolveModel(id)?.context;
    const window = found?.combinedMax ?? found?.inputMax;
    if (typeof window === 'number' && window > 0) return window;
  }
  return null;
}
