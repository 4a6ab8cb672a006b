import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every Prometheus metric the service exports, named once. */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  private readonly runsStarted = new Counter({
    name: 'loopwright_runs_started_total',
    help: 'Runs started.',
    registers: [this.registry],
  });
  private readonly runsFinished = new Counter({
    name: 'loopwright_runs_finished_total',
    help: 'Runs that reached a final status, by status.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  private readonly runsTakenOver = new Counter({
    name: 'loopwright_runs_taken_over_total',
    help: 'Runs this process took over after their own process died or shut down, by reason.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly runDuration = new Histogram({
    name: 'loopwright_run_duration_seconds',
    help: 'Wall time from a run starting to its final status (waits included).',
    labelNames: ['status'] as const,
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800],
    registers: [this.registry],
  });
  private readonly modelCalls = new Histogram({
    name: 'loopwright_model_call_duration_seconds',
    help: 'Duration of one streamed model call, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly timeToFirstToken = new Histogram({
    name: 'loopwright_model_time_to_first_token_seconds',
    help: 'Time from sending a model request to its first streamed piece.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    registers: [this.registry],
  });
  private readonly toolCalls = new Histogram({
    name: 'loopwright_tool_call_duration_seconds',
    help: 'Tool calls by tool and outcome, with their duration.',
    labelNames: ['tool', 'outcome'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  private readonly mcpCalls = new Counter({
    name: 'loopwright_mcp_calls_total',
    help: 'Calls to MCP server tools, by server (configured names only).',
    labelNames: ['server'] as const,
    registers: [this.registry],
  });
  private readonly mcpErrors = new Counter({
    name: 'loopwright_mcp_call_errors_total',
    help: 'MCP tool calls that ended in an error, by server and error code.',
    labelNames: ['server', 'code'] as const,
    registers: [this.registry],
  });
  private readonly mcpDuration = new Histogram({
    name: 'loopwright_mcp_call_duration_seconds',
    help: 'Duration of MCP tool calls, by server.',
    labelNames: ['server'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'loopwright_tokens_total',
    help: 'Tokens reported by the model, by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly modelTokens = new Counter({
    name: 'loopwright_model_tokens_total',
    help: 'Tokens of model calls by provider, model (configured ones; others are "other") and kind.',
    labelNames: ['provider', 'model', 'kind'] as const,
    registers: [this.registry],
  });
  private readonly modelCost = new Counter({
    name: 'loopwright_model_cost_usd_total',
    help: 'USD of priced model calls by provider and model (configured ones; others are "other").',
    labelNames: ['provider', 'model'] as const,
    registers: [this.registry],
  });
  readonly activeRuns = new Gauge({
    name: 'loopwright_active_runs',
    help: 'Runs this process is driving right now.',
    registers: [this.registry],
  });
  readonly openStreams = new Gauge({
    name: 'loopwright_open_streams',
    help: 'Event streams this process has open.',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** `server` is always a configured server name; `errorCode` a ToolErrorCode: both bounded sets. */
  mcpCall(server: string, errorCode: string | null, durationMs: number): void {
    this.mcpCalls.inc({ server });
    if (errorCode !== null) this.mcpErrors.inc({ server, code: errorCode });
    this.mcpDuration.observe({ server }, durationMs / 1000);
  }

  runStarted(): void {
    this.runsStarted.inc();
  }

  runTakenOver(reason: 'process_lost' | 'shutdown'): void {
    this.runsTakenOver.inc({ reason });
  }

  runFinished(status: string, durationMs: number): void {
    this.runsFinished.inc({ status });
    this.runDuration.observe({ status }, durationMs / 1000);
  }

  modelCall(outcome: 'ok' | 'error' | 'aborted', durationMs: number, firstTokenMs: number | null): void {
    this.modelCalls.observe({ outcome }, durationMs / 1000);
    if (firstTokenMs !== null) this.timeToFirstToken.observe(firstTokenMs / 1000);
  }

  toolCall(tool: string, outcome: string, durationMs: number): void {
    this.toolCalls.observe({ tool, outcome }, durationMs / 1000);
  }

  /** `provider` and `model` come from bounded sets (the caller maps anything else to `other`). */
  modelUsage(
    provider: string,
    model: string,
    tokens: { prompt: number; completion: number; cacheRead: number },
    costUsd: number | null,
  ): void {
    if (tokens.prompt > 0) this.modelTokens.inc({ provider, model, kind: 'prompt' }, tokens.prompt);
    if (tokens.completion > 0)
      this.modelTokens.inc({ provider, model, kind: 'completion' }, tokens.completion);
    if (tokens.cacheRead > 0) this.modelTokens.inc({ provider, model, kind: 'cache_read' }, tokens.cacheRead);
    if (costUsd !== null && costUsd > 0) this.modelCost.inc({ provider, model }, costUsd);
  }

  tokensUsed(prompt: number, completion: number): void {
    if (prompt > 0) this.tokens.inc({ kind: 'prompt' }, prompt);
    if (completion > 0) this.tokens.inc({ kind: 'completion' }, completion);
  }
}
