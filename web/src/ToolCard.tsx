import { useState } from 'react';
import type { Decision } from './api';
import { formatDuration, type ToolCallView } from './run-state';

interface Props {
  call: ToolCallView;
  /** Whether the run still waits for this call's approval (false once it ended). */
  awaitingApproval: boolean;
  /** Sends a decision; a refusal of the server (e.g. edited arguments that are not valid) rejects. */
  onDecide: (decision: Decision) => Promise<void>;
}

/** One tool call: arguments, why it waits, live output, result or error (always as text), and the approval controls. */
export function ToolCard({ call, awaitingApproval, onDecide }: Props) {
  const rejected = call.result?.errorCode === 'REJECTED';
  const edited = call.editedArguments !== undefined;
  const state =
    call.result === null
      ? awaitingApproval
        ? 'waiting for approval'
        : call.executor === 'client'
          ? 'waiting for the page'
          : 'running'
      : rejected
        ? 'rejected'
        : call.result.isError
          ? 'error'
          : 'done';
  return (
    <section
      className={`tool-card${call.result?.isError ? ' failed' : ''}${awaitingApproval ? ' waiting' : ''}`}
      aria-label={`Tool call ${call.name}`}
    >
      <header>
        <strong className="tool-name">{call.name}</strong>
        <span className="tool-state">{state}</span>
        {call.result?.durationMs !== undefined && (
          <span className="tool-duration">{formatDuration(call.result.durationMs)}</span>
        )}
      </header>
      <pre className="tool-arguments" aria-label="Arguments">
        {stringify(edited ? call.editedArguments : call.arguments)}
      </pre>
      {edited && (
        <details className="tool-model-arguments">
          <summary>Edited before approval: the model asked for</summary>
          <pre>{stringify(call.arguments)}</pre>
        </details>
      )}
      {call.approvalReason !== null && (awaitingApproval || call.result === null) && (
        <Reason text={call.approvalReason} />
      )}
      {call.output !== '' && (
        <pre className="tool-output" aria-label="Output">
          {call.output}
        </pre>
      )}
      {call.result !== null && !call.result.isError && (
        <pre className="tool-result" aria-label="Result">
          {call.result.content}
        </pre>
      )}
      {call.result !== null && call.result.isError && (
        <pre className="tool-error" aria-label="Error">
          {call.result.content}
        </pre>
      )}
      {awaitingApproval && <Approval call={call} onDecide={onDecide} />}
    </section>
  );
}

/** The server's reason for asking: a sentence, and for a write the diff it would make (lines coloured, still text). */
function Reason({ text }: { text: string }) {
  return (
    <pre className="tool-reason" aria-label="Why it asks">
      {text.split('\n').map((line, i) => (
        <span
          key={i}
          className={
            /^\+(?!\+\+)/.test(line)
              ? 'diff-add'
              : /^-(?!--)/.test(line)
                ? 'diff-del'
                : /^@@/.test(line)
                  ? 'diff-hunk'
                  : undefined
          }
        >
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function Approval({ call, onDecide }: { call: ToolCallView; onDecide: Props['onDecide'] }) {
  const [reason, setReason] = useState('');
  const [editing, setEditing] = useState(false);
  const [edited, setEdited] = useState(() => JSON.stringify(call.arguments ?? {}, null, 2));
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const parsed = editing ? parseArguments(edited) : null;

  const send = (decision: Decision) => {
    setSending(true);
    setError(null);
    onDecide(decision).then(
      () => setSending(false),
      (reason: unknown) => {
        setSending(false);
        setError(reason instanceof Error ? reason.message : String(reason));
      },
    );
  };

  return (
    <div className="approval">
      {editing && (
        <label className="field">
          Arguments (JSON)
          <textarea
            className="edit-arguments"
            spellCheck={false}
            value={edited}
            onChange={(event) => setEdited(event.target.value)}
            aria-invalid={parsed !== null && !parsed.ok}
          />
          {parsed !== null && !parsed.ok && <span className="field-error">{parsed.message}</span>}
        </label>
      )}
      <input
        type="text"
        aria-label="Reason"
        placeholder="Reason (sent to the model with a rejection)"
        value={reason}
        onChange={(event) => setReason(event.target.value)}
      />
      <div className="approval-actions">
        <button type="button" className="quiet" onClick={() => setEditing(!editing)}>
          {editing ? 'Keep the model’s arguments' : 'Edit arguments'}
        </button>
        <button
          type="button"
          disabled={sending || (parsed !== null && !parsed.ok)}
          onClick={() =>
            send({
              approve: true,
              ...(parsed?.ok ? { arguments: parsed.value } : {}),
              ...(reason.trim() ? { reason: reason.trim() } : {}),
            })
          }
        >
          Approve
        </button>
        <button
          type="button"
          className="danger"
          disabled={sending}
          onClick={() => send({ approve: false, ...(reason.trim() ? { reason: reason.trim() } : {}) })}
        >
          Reject
        </button>
      </div>
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

function parseArguments(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { ok: false, message: 'The arguments must be a JSON object ({ … }).' };
    }
    return { ok: true, value: value as Record<string, unknown> };
  } catch (err) {
    return { ok: false, message: `Not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2);
}
