import { useState } from 'react';
import type { DynamicToolUIPart, ToolUIPart } from 'ai';
import type { ToolCallExtras } from './run-events';

export type ToolPart = ToolUIPart | DynamicToolUIPart;

interface Props {
  name: string;
  part: ToolPart;
  extras: ToolCallExtras | undefined;
  /** Absent when the call can no longer be decided (its run was cancelled). */
  onDecide: ((approvalId: string, approved: boolean, reason: string) => void) | undefined;
}

const STATE_LABELS: Record<ToolPart['state'], string> = {
  'input-streaming': 'preparing',
  'input-available': 'running',
  'approval-requested': 'waiting for approval',
  'approval-responded': 'decided',
  'output-available': 'done',
  'output-error': 'error',
  'output-denied': 'rejected',
};

/** One tool call: its name, arguments, live output, result or error, and the approval controls. */
export function ToolCard({ name, part, extras, onDecide }: Props) {
  const [reason, setReason] = useState('');
  const failed = part.state === 'output-error' || part.state === 'output-denied';
  return (
    <section
      className={`tool-card state-${part.state}${failed ? ' failed' : ''}`}
      aria-label={`Tool call ${name}`}
    >
      <header>
        <strong className="tool-name">{name}</strong>
        <span className="tool-state">
          {part.state === 'approval-responded'
            ? part.approval.approved
              ? 'approved'
              : 'rejected'
            : STATE_LABELS[part.state]}
        </span>
        {extras?.durationMs !== undefined && (
          <span className="tool-duration">{formatDuration(extras.durationMs)}</span>
        )}
      </header>
      <pre className="tool-arguments" aria-label="Arguments">
        {stringify(part.input)}
      </pre>
      {extras !== undefined && extras.output !== '' && (
        <pre className="tool-output" aria-label="Output">
          {extras.output}
        </pre>
      )}
      {part.state === 'output-available' && (
        <pre className="tool-result" aria-label="Result">
          {stringify(part.output)}
        </pre>
      )}
      {part.state === 'output-error' && (
        <pre className="tool-error" role="alert" aria-label="Error">
          {part.errorText}
        </pre>
      )}
      {part.state === 'output-denied' && (
        <p className="tool-error">Rejected{part.approval.reason ? `: ${part.approval.reason}` : ''}</p>
      )}
      {part.state === 'approval-requested' && onDecide !== undefined && (
        <div className="approval">
          <input
            type="text"
            aria-label="Reason"
            placeholder="Reason (sent to the model with a rejection)"
            value={reason}
            onChange={(event) => setReason(event.target.value)}
          />
          <button type="button" onClick={() => onDecide(part.approval.id, true, reason)}>
            Approve
          </button>
          <button type="button" className="danger" onClick={() => onDecide(part.approval.id, false, reason)}>
            Reject
          </button>
        </div>
      )}
    </section>
  );
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2);
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
