import type { ModelProvider } from './model-provider';

/** A registered provider of the models whose names start with `<prefix>/`. */
interface Registration {
  prefix: string;
  provider: ModelProvider;
}

/**
 * Which provider serves a session's `model`. The OpenAI-compatible provider is the default and
 * serves every name as it is (`gpt-4.1-mini`, and OpenRouter's `openai/gpt-4o` too); a provider
 * registered under a prefix (a native Anthropic one, say, as `anthropic`) serves `anthropic/<model>`
 * and gets `<model>`. Providers register at start-up, as tools do: a module of the provider's own
 * calls `register` from its onModuleInit.
 */
export class ModelProviders {
  private readonly registered = new Map<string, Registration>();

  constructor(
    private readonly fallback: ModelProvider,
    /** LLM_MODEL: the model of a session that names none. */
    readonly defaultModel: string,
  ) {}

  register(prefix: string, provider: ModelProvider): void {
    if (!/^[a-z0-9-]+$/.test(prefix))
      throw new Error(`A model provider prefix must match [a-z0-9-]+: ${prefix}`);
    if (this.registered.has(prefix)) throw new Error(`Two model providers claim the prefix ${prefix}`);
    this.registered.set(prefix, { prefix, provider });
  }

  /** The provider of `model` and the name it knows the model by. */
  resolve(model: string): { provider: ModelProvider; model: string } {
    const slash = model.indexOf('/');
    const own = slash > 0 ? this.registered.get(model.slice(0, slash)) : undefined;
    return own
      ? { provider: own.provider, model: model.slice(slash + 1) }
      : { provider: this.fallback, model };
  }
}
