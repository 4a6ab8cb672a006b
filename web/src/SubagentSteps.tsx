import { Fragment } from 'react';
import type { Decision } from './api';
import { Markdown } from './Markdown';
import type { RunView, ToolCallView } from './run-state';
import { ToolCard } from './ToolCard';

interface Props {
  /** The child run whose steps are shown. */
  run: RunView;
  /** Every run below the turn's run, by id (a child's own delegations are looked up here). */
  all: Record<string, RunView>;
  /** Whether the turn's run waits (for a person): a child's call asking for approval shows its controls. */
  waiting: boolean;
  /** Decides a call of a child: sent at the turn's run id, which finds it below ("Agents and delegation"). */
  onDecide: (call: ToolCallView) => (decision: Decision) => Promise<void>;
}

/** A delegate call's child run, nested under its card: its text and tool calls, and its own delegations. */
export function SubagentSteps({ run, all, waiting, onDecide }: Props) {
  return (
    <div className="subagent" aria-label="Delegated work">
      {run.segments.map((segment, i) => {
        if (segment.kind === 'text') return segment.text !== '' && <Markdown key={i} text={segment.text} />;
        const call = run.calls[segment.id];
        const child = all[run.delegations[segment.id] ?? ''];
        return (
          <Fragment key={segment.id}>
            <ToolCard
              call={call}
              awaitingApproval={waiting && call.result === null && call.approvalReason !== null}
              onDecide={onDecide(call)}
            />
            {child && <SubagentSteps run={child} all={all} waiting={waiting} onDecide={onDecide} />}
          </Fragment>
        );
      })}
    </div>
  );
}
