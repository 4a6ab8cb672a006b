import { useCallback, useEffect, useState } from 'react';
import { chatIdOf, listSessions, storedKey, storeKey, type SessionSummary } from './api';
import { Chat } from './Chat';

interface Selection {
  chatId: string;
  sessionId: string | undefined;
  known: boolean;
}

const newChat = (): Selection => ({ chatId: crypto.randomUUID(), sessionId: undefined, known: false });

function chatFor(sessionId: string): Selection {
  const chatId = chatIdOf(sessionId);
  return { chatId: chatId ?? crypto.randomUUID(), sessionId, known: chatId !== undefined };
}

/** The playground: the key, the caller's sessions, and one chat at a time. */
export function App() {
  const [apiKey, setApiKey] = useState(storedKey);
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [sessionsError, setSessionsError] = useState<string | null>(null);
  const [selection, setSelection] = useState<Selection>(newChat);
  const [mode, setMode] = useState('safe');

  const refresh = useCallback(() => {
    listSessions(apiKey).then(
      (list) => {
        setSessions(list);
        setSessionsError(null);
      },
      (error: unknown) => setSessionsError(error instanceof Error ? error.message : String(error)),
    );
  }, [apiKey]);
  useEffect(refresh, [refresh]);

  return (
    <div className="layout">
      <aside className="sidebar">
        <h1>Loopwright</h1>
        <label className="field">
          API key
          <input
            type="password"
            autoComplete="off"
            value={apiKey}
            onChange={(event) => {
              setApiKey(event.target.value);
              storeKey(event.target.value);
            }}
          />
        </label>
        <label className="field">
          Mode of new chats
          <select value={mode} onChange={(event) => setMode(event.target.value)}>
            <option value="safe">safe: approve writes</option>
            <option value="write">write</option>
            <option value="exec">exec: approve commands</option>
          </select>
        </label>
        <button type="button" onClick={() => setSelection(newChat())}>
          New chat
        </button>
        <h2>Sessions</h2>
        {sessionsError !== null && (
          <p className="error" role="alert">
            {sessionsError}
          </p>
        )}
        <ul className="sessions" aria-label="Sessions">
          {sessions.map((session) => (
            <li key={session.id}>
              <button
                type="button"
                className={session.id === selection.sessionId ? 'selected' : ''}
                onClick={() => setSelection(chatFor(session.id))}
              >
                {session.title ?? 'Untitled'}
                <small>{new Date(session.createdAt).toLocaleString()}</small>
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <main>
        {selection.sessionId !== undefined && !selection.known && (
          <p className="notice">
            This session was not started from this browser: new messages start a chat of their own.
          </p>
        )}
        <Chat
          key={`${selection.chatId}:${mode}`}
          apiKey={apiKey}
          chatId={selection.chatId}
          mode={mode}
          sessionId={selection.sessionId}
          known={selection.known}
          onRunSettled={refresh}
        />
      </main>
    </div>
  );
}
