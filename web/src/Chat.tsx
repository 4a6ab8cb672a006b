import { Fragment, useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import {
  ApiError,
  cancelRun,
  decide,
  forkSession,
  getRun,
  getSession,
  postToolResult,
  runEvents,
  startRun,
  uploadFile,
  type Attachment,
  type Decision,
  type Prompt,
  type StoredMessage,
} from './api';
import { Markdown } from './Markdown';
import { RunPanel } from './RunPanel';
import {
  applyEvent,
  editedArgumentsIn,
  isActive,
  isPending,
  newRun,
  type RunEvent,
  type RunView,
  type ToolCallView,
} from './run-state';
import { readSse } from './sse';
import { SubagentSteps } from './SubagentSteps';
import { ToolCard } from './ToolCard';

/** The client tool the page declares on the sessions it creates, and answers itself. */
const BROWSER_TIME = 'get_browser_time';
const CLIENT_TOOLS = [
  {
    type: 'function',
    function: {
      name: BROWSER_TIME,
      description: "The current date, time and time zone of the user's browser.",
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    },
  },
];
const RECONNECT_MS = 1000;

/** A prompt sent from this page (or the active run found when a session opened) and its run. */
interface Turn {
  prompt: string | null;
  /** The files sent with the prompt. */
  files?: Attachment[];
  run: RunView;
}

export interface SessionInfo {
  title: string | null;
  model: string | null;
  mode: string;
}

interface Props {
  apiKey: string;
  /** The session to open; undefined for a new one, created by the first message. */
  sessionId: string | undefined;
  /** Options of the session the first message creates. */
  newSession: { mode: string; model: string };
  defaultModel: string | null;
  /** The session's title as the sessions list has it (it changes when the session is renamed). */
  listedTitle: string | null | undefined;
  onSessionStarted: (sessionId: string) => void;
  onRunSettled: () => void;
  /** Opens another session (a replay's fork). */
  onOpenSession: (sessionId: string) => void;
}

/** One session: its stored conversation, the runs started here (streamed), the composer, and the run panel. */
export function Chat({
  apiKey,
  sessionId: openedId,
  newSession,
  defaultModel,
  listedTitle,
  onSessionStarted,
  onRunSettled,
  onOpenSession,
}: Props) {
  const keyRef = useRef(apiKey);
  keyRef.current = apiKey;
  const sessionRef = useRef(openedId);
  const [info, setInfo] = useState<SessionInfo | null>(null);
  const [history, setHistory] = useState<StoredMessage[]>([]);
  /** Why stored runs failed, by run id (the store keeps it on the run, not in the conversation). */
  const [failures, setFailures] = useState<Record<string, string>>({});
  const [loadError, setLoadError] = useState<string | null>(null);
  const turnsRef = useRef<Turn[]>([]);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [submitting, setSubmitting] = useState(false);
  const [connectionLost, setConnectionLost] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [input, setInput] = useState('');
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const fileInput = useRef<HTMLInputElement>(null);
  const [inspected, setInspected] = useState<string | null>(null);
  const [runModel, setRunModel] = useState<string | null>(null);
  const unmounted = useRef(new AbortController());
  // The conversation follows new text while the reader is at its end, and stays put once they scroll up.
  const messagesRef = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  useEffect(() => {
    const el = messagesRef.current;
    if (el !== null && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [turns, history]);
  const answered = useRef(new Set<string>());

  const updateRun = useCallback((runId: string, update: (run: RunView) => RunView) => {
    turnsRef.current = turnsRef.current.map((t) =>
      t.run.runId === runId ? { ...t, run: update(t.run) } : t,
    );
    setTurns(turnsRef.current);
  }, []);
  const runOf = (runId: string) => turnsRef.current.find((t) => t.run.runId === runId)?.run;

  /** The page's own client tool, answered as soon as the model asks. */
  const answerClientCall = useCallback((runId: string, event: RunEvent) => {
    const id = String(event.toolCallId);
    if (answered.current.has(id)) return;
    answered.current.add(id);
    const now = new Date();
    const content =
      event.name === BROWSER_TIME
        ? `${now.toISOString()} (${Intl.DateTimeFormat().resolvedOptions().timeZone}, local ${now.toString()})`
        : `The playground has no tool named ${String(event.name)}.`;
    postToolResult(keyRef.current, runId, id, content).catch((err: unknown) =>
      setError(err instanceof Error ? err.message : String(err)),
    );
  }, []);

  /**
   * Follows a run's events to its end: the first response (the POST's stream) if there is one, then
   * `GET /v1/runs/:id/events` after the last event seen whenever the connection drops, so nothing
   * shows twice.
   */
  const follow = useCallback(
    async (runId: string, first: Response | null) => {
      const signal = unmounted.current.signal;
      let response = first;
      for (;;) {
        if (response === null) {
          try {
            response = await runEvents(keyRef.current, runId, runOf(runId)?.lastSeq ?? 0, signal);
          } catch (err) {
            if (signal.aborted) return;
            if (err instanceof ApiError) {
              setConnectionLost(false);
              setError(err.message);
              return;
            }
            await sleep(RECONNECT_MS);
            continue;
          }
          if (response === null) break; // the run ended and every event is here
        }
        setConnectionLost(false);
        try {
          await readSse(response.body!, (data) => {
            const event = JSON.parse(data) as RunEvent;
            updateRun(runId, (run) => applyEvent(run, event, performance.now()));
            if (event.type === 'tool_call_start' && event.executor === 'client')
              answerClientCall(runId, event);
          });
        } catch {
          // A dropped connection: read on from the last event seen.
        }
        if (signal.aborted) return;
        response = null;
        const run = runOf(runId);
        if (run === undefined || !isPending(run)) break;
        setConnectionLost(true);
        await sleep(RECONNECT_MS);
      }
      setConnectionLost(false);
      onRunSettled();
    },
    [answerClientCall, onRunSettled, updateRun],
  );

  // Opening a stored session: its messages, and its active run followed from its start.
  useEffect(() => {
    const abort = unmounted.current;
    if (openedId !== undefined) {
      getSession(keyRef.current, openedId).then(
        (session) => {
          setInfo({ title: session.title, model: session.model, mode: session.mode });
          const messages = session.messages;
          for (const runId of unansweredRuns(messages)) {
            getRun(keyRef.current, runId).then(
              (run) => {
                if (run.status === 'failed' && run.error !== null && !abort.signal.aborted)
                  setFailures((known) => ({ ...known, [runId]: run.error!.message }));
              },
              // Only an explanation is lost: the conversation itself is shown either way.
              () => undefined,
            );
          }
          if (session.activeRunId === null) {
            setHistory(messages);
            const lastRun = messages.findLast((m) => m.runId !== undefined)?.runId;
            if (lastRun !== undefined) setInspected(lastRun);
            return;
          }
          // What the store holds after the last prompt is the active run's: its replay shows it.
          const lastPrompt = messages.findLastIndex((m) => m.role === 'user');
          setHistory(lastPrompt === -1 ? messages : messages.slice(0, lastPrompt + 1));
          turnsRef.current = [{ prompt: null, run: newRun(session.activeRunId, false) }];
          setTurns(turnsRef.current);
          setInspected(session.activeRunId);
          void follow(session.activeRunId, null);
        },
        (err: unknown) => setLoadError(err instanceof Error ? err.message : String(err)),
      );
    }
    return () => abort.abort();
    // Opened once per mount: App gives each session its own Chat.
  }, []);

  const activeRun = turns.map((t) => t.run).findLast(isActive);
  const status = submitting
    ? 'submitted'
    : connectionLost
      ? 'reconnecting'
      : activeRun === undefined
        ? 'ready'
        : activeRun.status === 'requires_action'
          ? 'waiting'
          : 'streaming';

  /** Uploads files (from the Attach button, a drop or a paste) and adds them to the next prompt. */
  const attach = (files: readonly File[]) => {
    for (const file of files) {
      uploadFile(keyRef.current, file).then(
        (uploaded) => setAttachments((current) => [...current, uploaded]),
        (err: unknown) => setError(`${file.name}: ${err instanceof Error ? err.message : String(err)}`),
      );
    }
  };

  const send = (event: FormEvent) => {
    event.preventDefault();
    const text = input.trim();
    const files = attachments;
    // A prompt sent while the session's run is active waits for it (queued under it); files go at once.
    const enqueue = activeRun !== undefined;
    if ((text === '' && files.length === 0) || submitting) return;
    if (enqueue && (sessionRef.current === undefined || files.length > 0)) return;
    sendPrompt(text, files, enqueue);
  };

  /**
   * Sends `text` with `files` to the open session (a new one when none is open yet) and follows its
   * run; `enqueue`: behind its active run.
   */
  const sendPrompt = (text: string, files: typeof attachments, enqueue = false) => {
    const prompt: Prompt =
      files.length === 0
        ? text
        : [
            ...(text === '' ? [] : [{ type: 'text' as const, text }]),
            ...files.map((f) => ({ type: 'file' as const, fileId: f.id })),
          ];
    setSubmitting(true);
    setError(null);
    setNotice(null);
    const options = {
      title: (text || files[0]?.name || '').slice(0, 80),
      mode: newSession.mode,
      ...(newSession.model.trim() ? { model: newSession.model.trim() } : {}),
      clientTools: CLIENT_TOOLS,
    };
    startRun(keyRef.current, sessionRef.current, prompt, options, unmounted.current.signal, enqueue).then(
      (response) => {
        setSubmitting(false);
        setInput('');
        setAttachments([]);
        const runId = response.headers.get('X-Run-Id') ?? '';
        const sessionId = response.headers.get('X-Session-Id') ?? '';
        if (sessionRef.current === undefined) {
          sessionRef.current = sessionId;
          setInfo({ title: options.title, model: options.model ?? null, mode: options.mode });
          onSessionStarted(sessionId);
        }
        turnsRef.current = [...turnsRef.current, { prompt: text, files, run: newRun(runId, true) }];
        setTurns(turnsRef.current);
        setInspected(runId);
        void follow(runId, response);
      },
      (err: unknown) => {
        setSubmitting(false);
        if (unmounted.current.signal.aborted) return;
        setError(
          err instanceof Error && !(err instanceof TypeError)
            ? err.message
            : 'The server could not be reached.',
        );
      },
    );
  };

  /**
   * "Edit" on a past prompt, and "Regenerate" on an answer (its own prompt again): the session is
   * forked at the message before that prompt, the page switches to the fork, and `prompt` is sent
   * there. The source session stays as it was (it is still in the list).
   */
  const sendInstead = (promptId: string, prompt: string) => {
    const source = sessionRef.current;
    const at = history.findIndex((m) => m.id === promptId);
    if (source === undefined || at < 1 || submitting || activeRun !== undefined) return;
    setSubmitting(true);
    setError(null);
    setNotice(null);
    forkSession(keyRef.current, source, history[at - 1].id)
      .then(async (fork) => {
        const forked = await getSession(keyRef.current, fork.id);
        sessionRef.current = fork.id;
        setInfo({ title: forked.title, model: forked.model, mode: forked.mode });
        setHistory(forked.messages);
        setFailures({});
        turnsRef.current = [];
        setTurns([]);
        onSessionStarted(fork.id);
        sendPrompt(prompt, []);
      })
      .catch((err: unknown) => {
        setSubmitting(false);
        setError(err instanceof Error ? err.message : String(err));
      });
  };
  const canRewrite = !submitting && activeRun === undefined;

  const cancel = () => {
    if (activeRun === undefined) return;
    const runId = activeRun.runId;
    cancelRun(keyRef.current, runId).then(
      () => setNotice('Cancelled.'),
      (err: unknown) => setError(`Cancel failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  };

  const decideCall = (runId: string, call: ToolCallView) => (decision: Decision) =>
    decide(keyRef.current, runId, call.id, decision);

  const model =
    info?.model ?? turns.at(-1)?.run.model ?? runModel ?? (newSession.model.trim() || defaultModel);
  const panelRun = turns.find((t) => t.run.runId === inspected)?.run;

  return (
    <div className="session">
      <div className="chat">
        <header className="session-header">
          <h2>
            {listedTitle ??
              info?.title ??
              (openedId === undefined && turns.length === 0 ? 'New session' : 'Untitled session')}
          </h2>
          <p className="session-meta">
            <span>
              Model <strong className="model-name">{model ?? 'the server default'}</strong>
            </span>
            <span>
              Mode <strong>{info?.mode ?? newSession.mode}</strong>
            </span>
          </p>
        </header>
        <div
          className="messages"
          aria-live="polite"
          ref={messagesRef}
          onScroll={(event) => {
            const el = event.currentTarget;
            atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
          }}
        >
          {loadError !== null && (
            <p className="error" role="alert">
              {loadError}
            </p>
          )}
          <StoredConversation
            messages={history}
            failures={failures}
            onInspect={setInspected}
            onRewrite={canRewrite ? sendInstead : undefined}
          />
          {history.length === 0 && turns.length === 0 && openedId === undefined && (
            <p className="empty">
              Send a message to start a run. Tool calls appear as cards; in safe mode, writes wait for your
              approval and show the change they would make.
            </p>
          )}
          {turns.map((turn) => (
            <LiveTurn
              key={turn.run.runId}
              turn={turn}
              onDecide={decideCall}
              onInspect={() => setInspected(turn.run.runId)}
            />
          ))}
        </div>
        {connectionLost && <p className="notice">Connection lost, reconnecting…</p>}
        {error !== null && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {notice !== null && <p className="notice">{notice}</p>}
        <form
          className="composer"
          onSubmit={send}
          onDragOver={(event) => event.preventDefault()}
          onDrop={(event) => {
            event.preventDefault();
            attach([...event.dataTransfer.files]);
          }}
          onPaste={(event) => {
            if (event.clipboardData.files.length > 0) attach([...event.clipboardData.files]);
          }}
        >
          {attachments.length > 0 && (
            <ul className="attachments" aria-label="Attachments">
              {attachments.map((a) => (
                <li key={a.id} className="attachment">
                  <span>{a.name}</span>
                  <button
                    type="button"
                    className="link"
                    aria-label={`Remove ${a.name}`}
                    onClick={() => setAttachments((current) => current.filter((f) => f.id !== a.id))}
                  >
                    ×
                  </button>
                </li>
              ))}
            </ul>
          )}
          <textarea
            aria-label="Message"
            placeholder="Ask the agent… (Enter sends, Shift+Enter for a new line)"
            value={input}
            onChange={(event) => setInput(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && !event.shiftKey) send(event);
            }}
          />
          <div className="actions">
            <span className="status" data-status={status}>
              {status}
            </span>
            <input
              ref={fileInput}
              type="file"
              multiple
              hidden
              aria-label="Attach file"
              onChange={(event) => {
                attach([...(event.target.files ?? [])]);
                event.target.value = '';
              }}
            />
            <button type="button" onClick={() => fileInput.current?.click()}>
              Attach
            </button>
            <button type="button" className="danger" onClick={cancel} disabled={activeRun === undefined}>
              Cancel
            </button>
            <button
              type="submit"
              disabled={
                submitting ||
                (input.trim() === '' && attachments.length === 0) ||
                (activeRun !== undefined && attachments.length > 0)
              }
            >
              Send
            </button>
          </div>
        </form>
      </div>
      <RunPanel
        apiKey={apiKey}
        runId={inspected}
        live={panelRun}
        onModel={setRunModel}
        onReplayed={onOpenSession}
      />
    </div>
  );
}

function LiveTurn({
  turn,
  onDecide,
  onInspect,
}: {
  turn: Turn;
  onDecide: (runId: string, call: ToolCallView) => (decision: Decision) => Promise<void>;
  onInspect: () => void;
}) {
  const { run } = turn;
  const waiting = run.status === 'requires_action';
  const ended = !isPending(run);
  const hasContent = run.segments.some((s) => s.kind === 'tool' || s.text !== '');
  return (
    <>
      {turn.prompt !== null && (
        <article className="message user">
          {turn.prompt !== '' && <div className="text">{turn.prompt}</div>}
          {(turn.files ?? []).map((f) => (
            <div key={f.id} className="attachment" data-media-type={f.mediaType}>
              📎 {f.name}
            </div>
          ))}
        </article>
      )}
      {(hasContent || run.error !== null || ended) && (
        <article className="message assistant">
          {run.segments.map((segment, i) =>
            segment.kind === 'text' ? (
              segment.text !== '' && <Markdown key={i} text={segment.text} />
            ) : (
              <Fragment key={segment.id}>
                <ToolCard
                  call={run.calls[segment.id]}
                  awaitingApproval={
                    waiting &&
                    run.calls[segment.id].result === null &&
                    run.calls[segment.id].approvalReason !== null
                  }
                  onDecide={onDecide(run.runId, run.calls[segment.id])}
                />
                {run.children[run.delegations[segment.id] ?? ''] && (
                  <SubagentSteps
                    run={run.children[run.delegations[segment.id]]}
                    all={run.children}
                    waiting={waiting}
                    onDecide={(call) => onDecide(run.runId, call)}
                  />
                )}
              </Fragment>
            ),
          )}
          {run.output !== undefined && (
            // JSON as text (React escapes it), never as HTML or Markdown.
            <pre className="run-output" aria-label="Structured output">
              {JSON.stringify(run.output, null, 2)}
            </pre>
          )}
          {run.error !== null && (
            <p className="run-error" role="alert">
              The run failed: {run.error.message}
            </p>
          )}
          {ended && (
            <footer className="run-status">
              run {run.status}
              {run.usage && ` · ${run.usage.promptTokens} + ${run.usage.completionTokens} tokens`}
              {typeof run.usage?.costUsd === 'number' && ` · ${dollars(run.usage.costUsd)}`}
              <button type="button" className="link" onClick={onInspect}>
                Inspect run
              </button>
            </footer>
          )}
        </article>
      )}
      {!hasContent && isActive(run) && <p className="thinking">Thinking…</p>}
      {run.status === 'queued' && (
        <p className="thinking queued" data-status="queued">
          Queued{run.queuedPosition !== null && ` (${run.queuedPosition} in line)`}: starts when the run
          before it ends.
        </p>
      )}
    </>
  );
}

/** A session's stored messages: prompts as text, answers as sanitized Markdown, tool calls as cards. */
function StoredConversation({
  messages,
  failures,
  onInspect,
  onRewrite,
}: {
  messages: readonly StoredMessage[];
  failures: Readonly<Record<string, string>>;
  onInspect: (runId: string) => void;
  /** Sends a prompt instead of a stored one, in a fork (undefined while a run is active). */
  onRewrite: ((promptId: string, prompt: string) => void) | undefined;
}) {
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const results = new Map(
    messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content ?? '']),
  );
  const shown = messages.filter((m) => m.role === 'user' || m.role === 'assistant');
  return (
    <>
      {shown.map((m, i) => {
        const failure =
          m.runId !== undefined && shown[i + 1]?.runId !== m.runId ? failures[m.runId] : undefined;
        const failed = failure !== undefined && (
          <article className="message assistant stored">
            <p className="run-error" role="alert">
              The run failed: {failure}
            </p>
          </article>
        );
        if (m.role === 'user') {
          return (
            <Fragment key={m.id}>
              <article className="message user stored">
                {editing === m.id ? (
                  <form
                    className="edit-prompt"
                    onSubmit={(event) => {
                      event.preventDefault();
                      if (draft.trim() === '' || onRewrite === undefined) return;
                      setEditing(null);
                      onRewrite(m.id, draft.trim());
                    }}
                  >
                    <textarea
                      aria-label="Edited prompt"
                      value={draft}
                      autoFocus
                      onChange={(event) => setDraft(event.target.value)}
                    />
                    <div className="actions">
                      <button type="button" className="quiet" onClick={() => setEditing(null)}>
                        Discard
                      </button>
                      <button type="submit" disabled={draft.trim() === '' || onRewrite === undefined}>
                        Send in a fork
                      </button>
                    </div>
                  </form>
                ) : (
                  <>
                    <div className="text">{m.content}</div>
                    {onRewrite !== undefined && (
                      <button
                        type="button"
                        className="link"
                        title="Fork the session before this prompt and send an edited one"
                        onClick={() => {
                          setDraft(m.content ?? '');
                          setEditing(m.id);
                        }}
                      >
                        Edit
                      </button>
                    )}
                  </>
                )}
              </article>
              {failed}
            </Fragment>
          );
        }
        const endsRun = shown[i + 1]?.role !== 'assistant' || shown[i + 1]?.runId !== m.runId;
        return (
          <Fragment key={m.id}>
            <article className="message assistant stored">
              {m.content !== null && m.content !== '' && <Markdown text={m.content} />}
              {m.toolCalls?.map((call) => (
                <ToolCard
                  key={call.id}
                  call={{
                    id: call.id,
                    name: call.name,
                    arguments: parseStored(call.arguments),
                    executor: 'server',
                    approvalReason: null,
                    output: '',
                    result: results.has(call.id) ? { content: results.get(call.id)!, isError: false } : null,
                    editedArguments: editedArgumentsIn(results.get(call.id) ?? ''),
                  }}
                  awaitingApproval={false}
                  onDecide={() => Promise.resolve()}
                />
              ))}
              {endsRun && m.runId !== undefined && (
                <footer className="run-status">
                  <button type="button" className="link" onClick={() => onInspect(m.runId!)}>
                    Inspect run
                  </button>
                  {onRewrite !== undefined && promptOf(messages, m) !== undefined && (
                    <button
                      type="button"
                      className="link"
                      title="Fork the session before this answer's prompt and answer it again"
                      onClick={() => {
                        const prompt = promptOf(messages, m)!;
                        onRewrite(prompt.id, prompt.content ?? '');
                      }}
                    >
                      Regenerate
                    </button>
                  )}
                </footer>
              )}
            </article>
            {failed}
          </Fragment>
        );
      })}
    </>
  );
}

/** The prompt an answer answers: the last user message before it. */
function promptOf(messages: readonly StoredMessage[], answer: StoredMessage): StoredMessage | undefined {
  const at = messages.indexOf(answer);
  return messages.slice(0, at).findLast((m) => m.role === 'user');
}

/**
 * The stored runs whose last message is no final answer (a failed, cancelled or cut run's): only
 * these may have an error to show, so only these are asked for; the latest 20.
 */
function unansweredRuns(messages: readonly StoredMessage[]): string[] {
  const last = new Map<string, StoredMessage>();
  for (const m of messages) if (typeof m.runId === 'string') last.set(m.runId, m);
  return [...last]
    .filter(([, m]) => m.role !== 'assistant' || (m.toolCalls?.length ?? 0) > 0 || !m.content)
    .map(([runId]) => runId)
    .slice(-20);
}

/** Stored arguments are the model's JSON text; shown indented when they parse, as given otherwise. */
function parseStored(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A run's cost as people read dollars: `$0.42`, and a small one to its first significant digits (`$0.000123`). */
function dollars(usd: number): string {
  return new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: usd >= 0.01 || usd === 0 ? 2 : 6,
  }).format(usd);
}
