import { useEffect, useState } from 'react';
import { replayRun, runEvents } from './api';
import {
  applyEvent,
  formatDuration,
  isActive,
  newRun,
  stepsOf,
  type RunEvent,
  type RunView,
} from './run-state';
import { readSse } from './sse';

interface Props {
  apiKey: string;
  runId: string | null;
  /** The run as this page follows it live, when it does. */
  live: RunView | undefined;
  /** The model a loaded run used (run_started), for a session that names none. */
  onModel: (model: string) => void;
  /** Opens the session a replay of the run runs in. */
  onReplayed: (sessionId: string) => void;
}

/** A run's timeline (each model call and the tool calls it asked for) and its raw events. */
export function RunPanel({ apiKey, runId, live, onModel, onReplayed }: Props) {
  const [tab, setTab] = useState<'timeline' | 'events'>('timeline');
  const [loaded, setLoaded] = useState<RunView | null>(null);
  const [error, setError] = useState<string | null>(null);

  // A run this page did not follow (a stored one): its whole event log, read once.
  useEffect(() => {
    setLoaded(null);
    setError(null);
    if (runId === null || live !== undefined) return;
    const abort = new AbortController();
    let view = newRun(runId, false);
    runEvents(apiKey, runId, 0, abort.signal)
      .then(async (response) => {
        if (response === null) return;
        await readSse(response.body!, (data) => {
          view = applyEvent(view, JSON.parse(data) as RunEvent, 0);
        });
        setLoaded(view);
        if (view.model !== null) onModel(view.model);
      })
      .catch((err: unknown) => {
        if (!abort.signal.aborted) setError(err instanceof Error ? err.message : String(err));
      });
    return () => abort.abort();
  }, [apiKey, runId, live === undefined]);

  const run = live ?? loaded;
  /** Runs the run again in a fork (from its record; live after `fromStep` when given) and opens it. */
  const replay = (runId: string, fromStep?: number) => {
    replayRun(apiKey, runId, fromStep).then(
      (started) => onReplayed(started.sessionId),
      (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    );
  };
  return (
    <aside className="run-panel" aria-label="Run details">
      <div className="tabs" role="tablist">
        <button
          type="button"
          role="tab"
          aria-selected={tab === 'timeline'}
          onClick={() => setTab('timeline')}
        >
          Timeline
        </button>
        <button type="button" role="tab" aria-selected={tab === 'events'} onClick={() => setTab('events')}>
          Events
        </button>
      </div>
      {runId === null && <p className="empty">A run's steps and events show here once it starts.</p>}
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {run !== null && run !== undefined && (
        <>
          <p className="run-meta">
            Run <code>{run.runId.slice(0, 8)}</code> · {run.status}
            {run.model !== null && (
              <>
                {' '}
                · <span className="model-name">{run.model}</span>
              </>
            )}
            {!isActive(run) && (
              <button
                type="button"
                className="link replay"
                title="Run it again from what it stored, in a fork of its session: no model call, no tool"
                onClick={() => replay(run.runId)}
              >
                Replay
              </button>
            )}
          </p>
          {tab === 'timeline' ? (
            <Timeline
              run={run}
              onReplayFrom={isActive(run) ? undefined : (step) => replay(run.runId, step)}
            />
          ) : (
            <Events run={run} />
          )}
        </>
      )}
    </aside>
  );
}

function Timeline({
  run,
  onReplayFrom,
}: {
  run: RunView;
  /** Replays the run's steps up to this one from the record, the rest live (a finished run only). */
  onReplayFrom: ((step: number) => void) | undefined;
}) {
  const steps = stepsOf(run);
  if (steps.length === 0) return <p className="empty">No model call finished yet.</p>;
  return (
    <ol className="timeline" aria-label="Timeline">
      {steps.map((step) => (
        <li key={step.iteration} className="step">
          <div className="step-head">
            <strong>Step {step.iteration}</strong> model call
            {step.tokens !== null && (
              <span className="tokens">
                {step.tokens.prompt} + {step.tokens.completion} tokens
              </span>
            )}
            {step.durationMs !== null && <span className="duration">{formatDuration(step.durationMs)}</span>}
            {step.finishReason !== null && <span className="finish">{step.finishReason}</span>}
            {onReplayFrom !== undefined && (
              <button
                type="button"
                className="link"
                title="Replay this run in a fork: up to this step from the record, then live"
                onClick={() => onReplayFrom(step.iteration)}
              >
                Replay from here
              </button>
            )}
          </div>
          {step.tools.length > 0 && (
            <ul className="step-tools">
              {step.tools.map((tool) => (
                <li key={tool.id} className={`tool-${tool.status}`}>
                  <span className="tool-name">{tool.name}</span>
                  <span className="tool-status">{tool.status}</span>
                  {tool.durationMs !== null && (
                    <span className="duration">{formatDuration(tool.durationMs)}</span>
                  )}
                </li>
              ))}
            </ul>
          )}
        </li>
      ))}
    </ol>
  );
}

/** The raw events, newest last; text deltas kept as they came. */
function Events({ run }: { run: RunView }) {
  return (
    <ol className="events" aria-label="Events">
      {run.events.map(({ event }) => (
        <li key={event.seq}>
          <details>
            <summary>
              <span className="seq">{event.seq}</span> {event.type}
            </summary>
            <pre>{JSON.stringify(event, null, 2)}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}
