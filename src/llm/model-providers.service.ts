import { withFileData } from './file-data';
import { Logger } from '@nestjs/common';
import { ConfigError, type AppConfig } from '../config/app-config';
import { scrubSecrets, shownUrl } from '../config/secret-variables';
import {
  ModelError,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  type ServerAddress,
} from './model-provider';
import { guardModelStream, type StreamGuardLimits } from './model-stream-guard';
import { fullModelName, splitModelName } from './model-name';
import { registryTakesImages } from './model-registry';
import { withoutVisualFiles } from './visual-files';
import { RetryPolicy, waitUnlessAborted } from './retry-policy';

/** A provider as the server knows it: its name (the prefix of its models) and where it sends requests. */
export interface ProviderInfo {
  name: string;
  baseUrl: string;
}

/**
 * The configured providers by name, and the one path every model call takes through them: the
 * request's `provider/model` picks the provider (which gets its own name of the model), the call is
 * held to the idle timeout and the answer budget (guardModelStream), and a call that fails
 * retryably before its first event goes to the next of LLM_FALLBACK_MODELS. A call that has
 * streamed anything is never sent elsewhere. The finish names the `provider/model` that answered.
 *
 * A name whose provider is not configured (or names no provider) is never served by another:
 * LLM_MODEL and LLM_FALLBACK_MODELS stop start-up, a session's `model` is a 400 (`problem`).
 */
export class ModelProviders {
  private readonly logger = new Logger(ModelProviders.name);
  private readonly providers = new Map<
    string,
    { provider: ModelProvider; baseUrl: string; server: ServerAddress | undefined }
  >();
  /** LLM_MODEL as written: the model of a session that names none (`run_started` says it so). */
  readonly defaultModel: string;
  private readonly fallbackModels: readonly string[];
  private readonly allowed: readonly string[];
  private readonly limits: StreamGuardLimits;
  private readonly secretValues: readonly string[];
  private readonly retries: RetryPolicy;

  /**
   * `unconfigured`: the providers that exist but are not set up here, each with the variable that
   * would set it up (ProviderDefinition.variables), so that a model of one is refused naming it.
   */
  constructor(
    config: AppConfig,
    providers: ReadonlyArray<ProviderInfo & { provider: ModelProvider }>,
    private readonly unconfigured: ReadonlyMap<string, string | null> = new Map(),
    retries: RetryPolicy = new RetryPolicy(config.llm.maxRetries),
  ) {
    this.retries = retries;
    this.secretValues = config.secretValues;
    for (const p of providers) this.register(p.name, p.provider, p.baseUrl);
    this.defaultModel = config.llm.model;
    this.fallbackModels = config.llm.fallbackModels;
    this.allowed = config.llm.models;
    this.limits = { idleTimeoutMs: config.llm.idleTimeoutMs, answerMaxBytes: config.llm.answerMaxBytes };
    const problem = this.providerProblem(this.defaultModel);
    if (problem)
      throw new ConfigError('LLM_MODEL', `a model of a configured provider (${problem})`, this.defaultModel);
    for (const name of this.fallbackModels) {
      const fallbackProblem = this.providerProblem(name);
      if (fallbackProblem) {
        throw new ConfigError(
          'LLM_FALLBACK_MODELS',
          `models of configured providers (${fallbackProblem})`,
          this.fallbackModels.join(','),
        );
      }
    }
  }

  /** Adds a provider (start-up; tests add their own). */
  register(name: string, provider: ModelProvider, baseUrl: string): void {
    if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`A model provider name must match [a-z0-9-]+: ${name}`);
    if (this.providers.has(name)) throw new Error(`Two model providers claim the name ${name}`);
    this.providers.set(name, { provider, baseUrl, server: serverOf(baseUrl) });
  }

  /** The configured providers, for `GET /v1/models` and the banner: base URLs without credentials. */
  list(): ProviderInfo[] {
    return [...this.providers].map(([name, p]) => ({ name, baseUrl: shownUrl(p.baseUrl) }));
  }

  /**
   * Why a session may not name `model` (its provider is not configured, or LLM_MODELS leaves it
   * out), or undefined when it may.
   */
  problem(model: string): string | undefined {
    const problem = this.providerProblem(model);
    if (problem) return problem;
    if (this.allowed.length === 0) return undefined;
    const { provider, model: own } = splitModelName(model);
    const ok = this.allowed.some((entry) => {
      const allowed = splitModelName(entry);
      return allowed.provider === provider && (allowed.model === '*' || allowed.model === own);
    });
    return ok ? undefined : `${fullModelName(model)} is not one of LLM_MODELS (${this.allowed.join(', ')})`;
  }

  /** The provider of `model` and its own name for it; a ModelError when it is not configured (any more). */
  resolve(model: string): {
    provider: ModelProvider;
    model: string;
    name: string;
    server: ServerAddress | undefined;
  } {
    const split = splitModelName(model);
    const found = this.providers.get(split.provider);
    if (!found) {
      throw new ModelError(
        'MODEL_UNAVAILABLE',
        `The model ${model} is not served here: ${this.providerProblem(model)}.`,
        false,
      );
    }
    return {
      provider: found.provider,
      model: split.model,
      name: `${split.provider}/${split.model}`,
      server: found.server,
    };
  }

  /** Streams `request` (its `model` as `provider/model`) through its provider, or a fallback's. */
  async *stream(
    request: ModelRequest,
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamEvent, void, undefined> {
    // A user message's files are read once for this call, whichever provider answers it.
    request = await withFileData(request);
    const candidates = [
      request.model,
      ...this.fallbackModels.filter((m) => fullModelName(m) !== fullModelName(request.model)),
    ];
    for (let i = 0, retry = 0; ;) {
      const target = this.resolve(candidates[i]);
      const sent = i === 0 ? request : asFallbackGetsIt(request, target.name);
      const events = guardModelStream(
        (guarded, alive) => target.provider.stream({ ...sent, model: target.model }, guarded, alive),
        this.limits,
        signal,
      );
      let next: IteratorResult<ModelStreamEvent>;
      try {
        next = await events.next();
      } catch (thrown) {
        const err = this.withoutSecrets(thrown);
        if (signal.aborted || !(err instanceof ModelError) || !err.retryable) throw err;
        if (retry < this.retries.maxRetries) {
          retry++;
          await waitUnlessAborted(this.retries.delayMs(retry, err), signal);
          if (signal.aborted) throw err;
          continue;
        }
        if (i + 1 >= candidates.length) throw err;
        this.logger.warn({
          model: target.name,
          next: candidates[i + 1],
          msg: `model call failed before its first event, falling back: ${err.message}`,
        });
        i++;
        retry = 0;
        continue;
      }
      // The first event has come: this provider answers, whatever happens next.
      try {
        while (next.done !== true) {
          const event = next.value;
          yield event.type === 'finish' ? { ...event, model: target.name, server: target.server } : event;
          next = await events.next();
        }
      } catch (thrown) {
        throw this.withoutSecrets(thrown);
      } finally {
        await events.return();
      }
      return;
    }
  }

  /**
   * An upstream's error without the configured secrets: its words are relayed (the run's error,
   * logs, spans), and an upstream may quote the request it refused, key and headers included.
   */
  private withoutSecrets(err: unknown): unknown {
    if (!(err instanceof ModelError)) return err;
    const message = scrubSecrets(err.message, this.secretValues);
    return message === err.message
      ? err
      : new ModelError(err.code, message, err.retryable, err.status, err.retryAfterMs);
  }

  private providerProblem(model: string): string | undefined {
    const { provider, model: own } = splitModelName(model);
    if (own === '') return `${model} names no model`;
    if (this.providers.has(provider)) return undefined;
    if (this.unconfigured.has(provider)) {
      const setting = this.unconfigured.get(provider);
      return `${provider} is not configured${setting ? `: set ${setting}` : ''}`;
    }
    const configured = [...this.providers.keys()].join(', ');
    return `${provider} is not a configured model provider (configured: ${configured}; write an OpenAI-compatible router's vendor/model as openai/vendor/model)`;
  }
}

/** The host and port of a base URL (the scheme's port when it names none); undefined when it is no URL. */
function serverOf(baseUrl: string): ServerAddress | undefined {
  try {
    const url = new URL(baseUrl);
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
    return { address: url.hostname.replace(/^\[(.*)\]$/, '$1'), port };
  } catch {
    // Tests register providers under names that are no URL: such a provider has no address to report.
    return undefined;
  }
}

/**
 * The request as a fallback model gets it: the caller shaped it for the model it named
 * (ModelCalls), so a fallback the registry knows takes no images or PDFs gets a note in place of
 * each one ("Attachments").
 */
function asFallbackGetsIt(request: ModelRequest, model: string): ModelRequest {
  return registryTakesImages(model) === false
    ? { ...request, messages: withoutVisualFiles(request.messages) }
    : request;
}
