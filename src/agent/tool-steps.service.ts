import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { ModelToolCall } from '../llm/model-provider';
import { generateToolCallId, isUsableToolCallId } from '../llm/tool-call-accumulator';
import { Metrics } from '../metrics/metrics.service';
import { checkAgainst } from '../tools/json-schema';
import type { ToolErrorCode } from '../tools/tool';
import { parseToolArguments } from '../tools/tool-arguments';
import { ToolRegistry } from '../tools/tool-registry.service';
import { DELEGATE_TOOL } from '../tools/builtin/delegate.tool';
import { callKey } from './call-key';
import type { RunHandle } from './run-handle';
import { RecordedRuns, recordedDecision } from './recorded-runs.service';
import { RunTools } from './run-tools.service';
import { ToolAttachments } from './tool-attachments.service';
import type { PlannedCall } from './step-record';
import { errorSettlement, resultEvent, toolMessage } from './tool-results';

export type { PlannedCall } from './step-record';
import {
  ConversationStore,
  type MessageRow,
  type ToolCallRow,
  type ToolCallSettlement,
} from '../store/conversation-store.service';
import { RunJournal } from '../store/run-journal.service';
import { RunStore } from '../store/run-store.service';

/** The same tool with the same arguments is run at most twice in a run; the third ask is refused. */
const MAX_IDENTICAL_CALLS = 2;

/** A call that ran, its result not stored yet. */
interface RanCall {
  message: MessageRow;
  settlement: ToolCallSettlement;
}

/**
 * Decides what happens to each tool call of a step, runs the ones that may run (through RunTools) and
 * stores their results.
 */
@Injectable()
export class ToolSteps {
  constructor(
    private readonly tools: RunTools,
    private readonly registry: ToolRegistry,
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly metrics: Metrics,
    private readonly journal: RunJournal,
    private readonly recordedRuns: RecordedRuns,
    private readonly attachments: ToolAttachments,
  ) {}

  /**
   * Decides every call in the order the model asked; `lastIteration` answers them all with an error.
   * A replay's recorded step decides each as the original did (recordedDecision).
   */
  async plan(h: RunHandle, calls: readonly ModelToolCall[], lastIteration: boolean): Promise<PlannedCall[]> {
    const recorded = await this.recordedRuns.calls(h.run, h.run.iterations + 1);
    const planned: PlannedCall[] = [];
    for (const [position, call] of calls.entries()) {
      const callId = this.uniqueCallId(h, call.id);
      const rawArguments = call.arguments.trim() === '' ? '{}' : call.arguments;
      const key = callKey(call.name, rawArguments);
      const seen = h.countCall(key);
      const parsed = parseToolArguments(rawArguments);
      const base = {
        id: randomUUID(),
        callId,
        position,
        name: call.name,
        rawArguments,
        eventArguments: parsed.ok ? parsed.value : rawArguments,
        approvalReason: null,
      };
      const lookup = h.toolset.lookup(call.name);
      // A refused call is answered by the server, a client tool's too: nobody waits for the client's result.
      const refuse = (code: ToolErrorCode, message: string): PlannedCall => ({
        ...base,
        executor: 'server',
        status: 'error',
        settlement: errorSettlement(code, message),
      });

      if (recorded !== null) {
        planned.push({ ...base, ...recordedDecision(recorded[position]) });
      } else if (lastIteration) {
        planned.push(
          refuse(
            'MAX_ITERATIONS',
            `Not run: this run reached its limit of ${h.run.maxIterations} model calls. Answer with what you have.`,
          ),
        );
      } else if (call.argumentsRefused !== undefined) {
        planned.push(refuse('INVALID_ARGUMENTS', call.argumentsRefused));
      } else if (lookup.kind === 'unknown') {
        planned.push(refuse('UNKNOWN_TOOL', lookup.reason));
      } else if (lookup.kind === 'refused') {
        planned.push(refuse('PERMISSION_DENIED', lookup.reason));
      } else if (!parsed.ok) {
        planned.push(refuse('INVALID_ARGUMENTS', parsed.message));
      } else if (seen >= MAX_IDENTICAL_CALLS) {
        planned.push(
          refuse(
            'REPEATED_CALL',
            `Not run: ${call.name} was already called ${seen} times in this run with exactly these arguments. ` +
              'Its result will not change; use the results you have or try something different.',
          ),
        );
      } else if (lookup.kind === 'client') {
        const check = checkAgainst(lookup.validate, parsed.value);
        planned.push(
          check.ok
            ? { ...base, executor: 'client', status: 'awaiting_client', settlement: null }
            : refuse('INVALID_ARGUMENTS', `Invalid arguments for ${call.name}: ${check.message}`),
        );
      } else {
        const check = this.registry.validate(lookup.tool, parsed.value);
        if (!check.ok) {
          planned.push(refuse('INVALID_ARGUMENTS', `Invalid arguments for ${call.name}: ${check.message}`));
        } else if (lookup.tool.name === DELEGATE_TOOL) {
          // Runs without approval: it waits for its child run (runs/delegations), as a call waits for a person.
          planned.push({ ...base, executor: 'server', status: 'awaiting_child', settlement: null });
        } else if (lookup.policy === 'confirm') {
          const approvalReason = await this.tools.approvalText(h, lookup.tool, parsed.value, callId);
          planned.push({
            ...base,
            executor: 'server',
            status: 'pending_approval',
            settlement: null,
            approvalReason,
          });
        } else {
          planned.push({ ...base, executor: 'server', status: 'pending', settlement: null });
        }
      }
    }
    return planned;
  }

  /**
   * Runs the step's server calls that may run (pending or approved), concurrently; each result is
   * stored as it comes, after `recorded` — the write that stores the calls. A call that may change
   * something starts only once `recorded` resolved, so nothing is ever done by a call the store does
   * not hold; a read the model just asked for (its tool's kind is `read`: it changes nothing) starts
   * at once, while the record commits, and only what it produces waits for the record. When
   * `recorded` fails, no call that writes runs and no result is written. Settles once every result is
   * in the conversation, its write tracked by the handle (RunHandle.trackWrite).
   */
  execute(
    h: RunHandle,
    calls: readonly ToolCallRow[],
    recorded: Promise<void> = Promise.resolve(),
  ): Promise<void> {
    const runnable = calls.filter(
      (c) => c.status === 'pending' || c.status === 'approved' || c.status === 'running',
    );
    const toMark = runnable.filter((c) => c.status !== 'running').map((c) => c.id);
    const marked = recorded.then(() =>
      toMark.length === 0
        ? undefined
        : h.sink.retrying(() =>
            this.conversation.markToolCalls(this.store.queryable, toMark, 'running', true),
          ),
    );
    // Heard through `recorded`, which every call awaits: a step of reads alone never waits for this.
    marked.catch(() => undefined);
    // A replay's recorded calls settle in the order the original's did (one after the other).
    const ranks = this.recordedRuns.ranks(h.run, runnable);
    const done = runnable.map(() => {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve: () => resolve() };
    });
    const each = runnable.map((call, i) => {
      const turn = this.readNow(h, call)
        ? Promise.resolve()
        : marked
            .then(() => ranks)
            .then((r) => (r === null || r[i] === 0 ? undefined : done[r.indexOf(r[i] - 1)].promise));
      const ran = turn.then(() => this.runOne(h, call, recorded));
      const settled = ran.then((r) => this.settleOne(h, call, r, recorded));
      settled.then(done[i].resolve, done[i].resolve);
      return settled;
    });
    return Promise.all(each).then(() => undefined);
  }

  /**
   * Whether `call` may run before its record commits: a read the model has just asked for (neither
   * approved nor taken up from a lost process), in a run that is not a replay (whose calls are
   * answered as recorded, in the original's order). Its result is the same either way; the step's
   * record, under load tens of milliseconds, is then no longer on the way to the next model call.
   */
  private readNow(h: RunHandle, call: ToolCallRow): boolean {
    if (call.status !== 'running' || h.run.replay) return false;
    const lookup = h.toolset.lookup(call.name);
    return lookup.kind === 'server' && lookup.tool.kind === 'read';
  }

  /**
   * Runs one call: its result, not stored yet, once `recorded` (its call's record) has committed —
   * the call itself ran only after it, unless it is a read (readNow).
   */
  private async runOne(h: RunHandle, call: ToolCallRow, recorded: Promise<void>): Promise<RanCall> {
    // A replay's recorded call is answered as the original's was (RecordedRuns), never run.
    const timed =
      (await this.recordedRuns.result(h.run, call)) ??
      (await this.tools.run(h, call, h.toolset.lookup(call.name), recorded));
    await recorded;
    const { result, durationMs } = timed;
    const edited = call.approval?.editedArguments;
    const content =
      edited === undefined || edited === null
        ? result.content
        : `[A person edited the arguments of this call before approving it; it ran with ${JSON.stringify(edited)}]\n${result.content}`;
    // A file the result carries (read_file of an image) is stored as a file, its call's record
    // committed (awaited above). A replayed result's file is the recorded one.
    const attachment = result.attachment;
    const parts = timed.parts ?? (attachment ? await this.attachments.store(h, content, attachment) : null);
    return {
      message: toolMessage(h.run.id, call, content, parts),
      settlement: {
        parts,
        status: result.isError ? 'error' : 'completed',
        result: content,
        isError: result.isError ?? false,
        errorCode: result.isError ? (result.errorCode ?? 'EXECUTION_ERROR') : null,
        truncated: result.truncated ?? false,
        durationMs,
        changes: result.changes ?? null,
      },
    };
  }

  /** Stores a call's result once `recorded` (its call's record) has, and adds it to the conversation. */
  private async settleOne(
    h: RunHandle,
    call: ToolCallRow,
    ran: RanCall,
    recorded: Promise<void>,
  ): Promise<void> {
    await recorded;
    const { message, settlement } = ran;
    // Not awaited here: the next model call may start while the result is written (its events
    // queue behind this write, so no stream sees them first); the loop awaits it before the step
    // after, and a failure stops the run at once (RunHandle.trackWrite).
    h.trackWrite(
      h.sink.record([resultEvent(call.callId, call.name, settlement)], (at) =>
        this.journal.recordResult(at, { call, settlement, messageId: message.id }),
      ),
    );
    h.addMessages([message]);
    this.countOutcome(call.name, call.executor, settlement.errorCode ?? 'ok', settlement.durationMs);
    traceCall(h, call, settlement);
  }

  /** Counts a call's outcome in the metrics, under a label from a closed set (never a name the model invented). */
  countOutcome(name: string, executor: 'server' | 'client', outcome: string, durationMs: number): void {
    this.metrics.toolCall(this.registry.metricName(name, executor), outcome, durationMs);
  }

  /** Counts and traces a call settled when its step was planned (refused, invalid…): it ran for no time. */
  settledAtPlan(h: RunHandle, call: PlannedCall & { settlement: ToolCallSettlement }): void {
    this.countOutcome(call.name, call.executor, call.settlement.errorCode ?? 'ok', 0);
    traceCall(h, { ...call, approval: null, createdAt: new Date() }, call.settlement);
  }

  /**
   * The call's id in the run: the upstream's when usable (whatever the provider), otherwise
   * generated. Some servers reuse ids across responses ('0', '1' …): within a run an id must name
   * one call.
   */
  private uniqueCallId(h: RunHandle, upstreamId: string): string {
    let id = upstreamId.trim();
    while (!isUsableToolCallId(id) || h.hasCallId(id)) id = generateToolCallId();
    h.useCallId(id);
    return id;
  }
}

/**
 * The call's `execute_tool` span, once it has its result. A call a person approved waited from its
 * record until it ran: its span starts at the record, so the wait shows.
 */
function traceCall(
  h: RunHandle,
  call: Pick<ToolCallRow, 'callId' | 'name' | 'rawArguments' | 'approval' | 'createdAt'>,
  s: ToolCallSettlement,
): void {
  const ranAt = Date.now() - s.durationMs;
  h.trace.toolCall({
    name: call.name,
    callId: call.callId,
    ranAt,
    ...(call.approval ? { waitedSince: call.createdAt.getTime(), waitedFor: 'approval' as const } : {}),
    isError: s.isError,
    errorCode: s.errorCode,
    arguments: () => call.rawArguments,
    result: () => s.result,
  });
}
