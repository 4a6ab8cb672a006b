import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  getToolName,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from 'ai';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { authHeaders, cancelRun, getSession, rememberChat, type StoredMessage } from './api';
import { History } from './History';
import { useRunExtras } from './run-events';
import { ToolCard } from './ToolCard';

/** What the server puts in `start` and `finish` (API.md, "Frontend protocols"). */
interface RunMetadata {
  runId?: string;
  sessionId?: string;
  status?: string;
  usage?: { promptTokens: number; completionTokens: number };
}
type PageMessage = UIMessage<RunMetadata>;

/** The client tool the page declares on the sessions it creates and answers itself. */
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
const FINISHED = new Set(['completed', 'max_iterations', 'cancelled', 'budget_exceeded', 'failed']);
const RESUME_DELAY_MS = 1000;

interface Props {
  apiKey: string;
  chatId: string;
  mode: string;
  /** The stored session shown above the live chat, when this chat continues one. */
  sessionId: string | undefined;
  /** This browser had this chat before: a run of it may be going or waiting. */
  known: boolean;
  onRunSettled: () => void;
}

export function Chat({ apiKey, chatId, mode, sessionId, known, onRunSettled }: Props) {
  const keyRef = useRef(apiKey);
  keyRef.current = apiKey;
  // Resubmit only what the person or the page itself answered (approvals, the client tool), never a
  // replayed step that merely ended with a tool result.
  const answeredRef = useRef(false);

  const transport = useMemo(
    () =>
      new DefaultChatTransport<PageMessage>({
        api: '/v1/ai-sdk/chat',
        headers: () => authHeaders(keyRef.current),
        // SessionOptions for the session this chat id creates (ignored by the server afterwards).
        body: { mode, clientTools: CLIENT_TOOLS },
        // The stored conversation is the truth: send only the last message.
        prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body }) => ({
          body: { ...body, title: titleOf(messages), id, messages: messages.slice(-1), trigger, messageId },
        }),
      }),
    [mode],
  );

  const chat = useChat<PageMessage>({
    id: chatId,
    transport,
    // A chat this browser had before may have a run going (or waiting): pick it up from its start.
    resume: known,
    sendAutomaticallyWhen: ({ messages }) => {
      if (!answeredRef.current) return false;
      const ready =
        lastAssistantMessageIsCompleteWithApprovalResponses({ messages }) ||
        lastAssistantMessageIsCompleteWithToolCalls({ messages });
      if (ready) answeredRef.current = false;
      return ready;
    },
    onToolCall: ({ toolCall }) => {
      if (toolCall.dynamic || toolCall.toolName !== BROWSER_TIME) return;
      answeredRef.current = true;
      const now = new Date();
      void chat.addToolOutput({
        tool: BROWSER_TIME,
        toolCallId: toolCall.toolCallId,
        output: `${now.toISOString()} (${Intl.DateTimeFormat().resolvedOptions().timeZone}, local ${now.toString()})`,
      });
    },
    onFinish: () => onRunSettled(),
  });
  const { messages, status, error, resumeStream } = chat;

  const last = messages.findLast((m) => m.role === 'assistant');
  const runId = last?.metadata?.runId;
  const runStatus = last?.metadata?.status;
  const liveSessionId = last?.metadata?.sessionId;
  const extras = useRunExtras(apiKey, runId);

  useEffect(() => {
    if (liveSessionId !== undefined) rememberChat(liveSessionId, chatId);
  }, [liveSessionId, chatId]);

  // A dropped connection (not an answer from the server): follow the run again. The server replays
  // the run from its start and the transport replaces the message it had, so no text repeats.
  useEffect(() => {
    if (status !== 'error' || !(error instanceof TypeError)) return;
    const timer = setTimeout(() => void resumeStream(), RESUME_DELAY_MS);
    return () => clearTimeout(timer);
  }, [status, error, resumeStream]);

  const [history, setHistory] = useState<StoredMessage[]>([]);
  useEffect(() => {
    if (sessionId === undefined) return;
    getSession(apiKey, sessionId).then(
      (stored) => setHistory(stored),
      () => setHistory([]),
    );
  }, [apiKey, sessionId]);

  const [input, setInput] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const busy = status === 'submitted' || status === 'streaming';
  // A run cancelled while it waited has no stream to say so: the page remembers it ended.
  const [cancelledRunId, setCancelledRunId] = useState<string | null>(null);
  const waitingRunCancelled = !busy && runId !== undefined && runId === cancelledRunId;
  const runActive =
    runId !== undefined &&
    !waitingRunCancelled &&
    (busy || runStatus === undefined || !FINISHED.has(runStatus));

  const send = (event: FormEvent) => {
    event.preventDefault();
    const text = input.trim();
    if (text === '' || busy) return;
    setInput('');
    setNotice(null);
    void chat.sendMessage({ text });
  };

  const cancel = () => {
    if (runId === undefined) return;
    cancelRun(apiKey, runId).then(
      () => {
        setCancelledRunId(runId);
        setNotice('Cancelled.');
        onRunSettled();
      },
      (reason: unknown) => setNotice(`Cancel failed: ${String(reason)}`),
    );
  };

  const decide = (approvalId: string, approved: boolean, reason: string) => {
    answeredRef.current = true;
    void chat.addToolApprovalResponse({
      id: approvalId,
      approved,
      ...(reason.trim() ? { reason: reason.trim() } : {}),
    });
  };

  return (
    <div className="chat">
      <div className="messages" aria-live="polite">
        <History messages={messages[0]?.role === 'assistant' ? upToLastPrompt(history) : history} />
        {history.length === 0 && messages.length === 0 && (
          <p className="empty">
            Send a message to start a run. Tool calls appear as cards; writes wait for your approval in safe
            mode.
          </p>
        )}
        {messages.map((message) => (
          <article key={message.id} className={`message ${message.role}`}>
            {message.parts.map((part, index) => {
              if (part.type === 'text') {
                return (
                  <div key={index} className="text">
                    {part.text}
                  </div>
                );
              }
              if (isToolUIPart(part)) {
                return (
                  <ToolCard
                    key={part.toolCallId}
                    name={getToolName(part)}
                    part={part}
                    extras={extras.get(part.toolCallId)}
                    onDecide={waitingRunCancelled && message === last ? undefined : decide}
                  />
                );
              }
              return null;
            })}
            {message.role === 'assistant' &&
              message.metadata?.status !== undefined &&
              !(busy && message === last) && (
                <footer className="run-status">
                  run{' '}
                  {message.metadata.status === 'requires_action'
                    ? 'waiting for you'
                    : message.metadata.status}
                  {message.metadata.usage &&
                    ` · ${message.metadata.usage.promptTokens} + ${message.metadata.usage.completionTokens} tokens`}
                </footer>
              )}
          </article>
        ))}
      </div>
      {error !== undefined && (
        <p className="error" role="alert">
          {error instanceof TypeError ? 'Connection lost, reconnecting…' : error.message}
        </p>
      )}
      {notice !== null && <p className="notice">{notice}</p>}
      <form className="composer" onSubmit={send}>
        <textarea
          aria-label="Message"
          placeholder="Ask the agent…"
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
          <button type="button" className="danger" onClick={cancel} disabled={!runActive}>
            Cancel
          </button>
          <button type="submit" disabled={busy || input.trim() === ''}>
            Send
          </button>
        </div>
      </form>
    </div>
  );
}

/** The session's title, from the chat's first prompt (the server keeps the first request's options only). */
function titleOf(messages: readonly PageMessage[]): string | undefined {
  const first = messages.find((m) => m.role === 'user');
  const text = first?.parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join(' ')
    .trim();
  return text ? text.slice(0, 80) : undefined;
}

/**
 * A resumed run replays its answer from the start, and a session has at most one active run: the one
 * its last prompt started. What the store holds after that prompt is in the replay, so it is not
 * shown twice.
 */
function upToLastPrompt(history: readonly StoredMessage[]): readonly StoredMessage[] {
  const last = history.findLastIndex((m) => m.role === 'user');
  return last === -1 ? history : history.slice(0, last + 1);
}
