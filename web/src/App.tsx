import { useCallback, useEffect, useState } from 'react';
import {
  deleteSession,
  getModels,
  listSessions,
  renameSession,
  storedKey,
  storeKey,
  type ModelsInfo,
  type SessionSummary,
} from './api';
import { SchedulesPanel } from './SchedulesPanel';
import { Chat } from './Chat';

/** Which session the main area shows; `view` changes only when the person picks another one. */
interface Selection {
  view: string;
  sessionId: string | undefined;
}

const newSelection = (): Selection => ({ view: crypto.randomUUID(), sessionId: undefined });

/** The open session is the page's address (`?session=<id>`): a reload, or Back after a link, opens it again. */
const SESSION_PARAM = 'session';

function selectionFromAddress(): Selection {
  const id = new URLSearchParams(window.location.search).get(SESSION_PARAM);
  return id === null || id === '' ? newSelection() : { view: id, sessionId: id };
}

function showInAddress(sessionId: string | undefined): void {
  const url = new URL(window.location.href);
  if (sessionId === undefined) url.searchParams.delete(SESSION_PARAM);
  else url.searchParams.set(SESSION_PARAM, sessionId);
  if (url.href !== window.location.href) window.history.replaceState(null, '', url);
}

/** The playground: the key, the caller's sessions (search, rename, delete), and one session at a time. */
export function App() {
  const [apiKey, setApiKey] = useState(storedKey);
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [listError, setListError] = useState<string | null>(null);
  const [selection, setSelection] = useState<Selection>(selectionFromAddress);
  useEffect(() => showInAddress(selection.sessionId), [selection.sessionId]);
  const [search, setSearch] = useState('');
  const [mode, setMode] = useState('safe');
  const [model, setModel] = useState('');
  const [models, setModels] = useState<ModelsInfo | null>(null);
  // On a phone the sessions fold away behind a button, so the conversation is on the first screen.
  const [menuOpen, setMenuOpen] = useState(false);

  const refresh = useCallback(() => {
    listSessions(apiKey).then(
      (list) => {
        setSessions(list);
        setListError(null);
      },
      (error: unknown) => setListError(error instanceof Error ? error.message : String(error)),
    );
  }, [apiKey]);
  useEffect(refresh, [refresh]);
  useEffect(() => {
    getModels(apiKey).then(setModels, () => setModels(null));
  }, [apiKey]);

  const onSessionStarted = useCallback(
    (sessionId: string) => {
      setSelection((s) => ({ ...s, sessionId }));
      refresh();
    },
    [refresh],
  );

  const shown = sessions.filter((s) => titleOf(s).toLowerCase().includes(search.trim().toLowerCase()));

  return (
    <div className="layout">
      <aside className="sidebar">
        <div className="brand">
          <h1>Loopwright</h1>
          <button
            type="button"
            className="menu-toggle quiet"
            aria-expanded={menuOpen}
            onClick={() => setMenuOpen(!menuOpen)}
          >
            {menuOpen ? 'Hide sessions' : 'Sessions'}
          </button>
        </div>
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
        <div className={`sidebar-body${menuOpen ? ' open' : ''}`}>
          <fieldset className="new-session">
            <legend>New session</legend>
            <label className="field">
              Model
              <input
                type="text"
                list="model-suggestions"
                placeholder={models?.default ?? 'the server default'}
                value={model}
                onChange={(event) => setModel(event.target.value)}
              />
              <datalist id="model-suggestions">
                {models !== null && <option value={models.default} />}
                {models?.providers.map((p) => (
                  <option key={p.name} value={`${p.name}/`} label={p.baseUrl} />
                ))}
              </datalist>
            </label>
            <label className="field">
              Mode of new chats
              <select value={mode} onChange={(event) => setMode(event.target.value)}>
                <option value="safe">safe: approve writes</option>
                <option value="write">write</option>
                <option value="exec">exec: approve commands</option>
              </select>
            </label>
            <button
              type="button"
              onClick={() => {
                setSelection(newSelection());
                setMenuOpen(false);
              }}
            >
              New chat
            </button>
          </fieldset>
          <h2>Sessions</h2>
          <input
            type="search"
            className="search"
            aria-label="Search sessions"
            placeholder="Search by title"
            value={search}
            onChange={(event) => setSearch(event.target.value)}
          />
          {listError !== null && (
            <p className="error" role="alert">
              {listError}
            </p>
          )}
          <ul className="sessions" aria-label="Sessions">
            {shown.map((session) => (
              <SessionItem
                key={session.id}
                session={session}
                selected={session.id === selection.sessionId}
                onOpen={() => {
                  setSelection({ view: session.id, sessionId: session.id });
                  setMenuOpen(false);
                }}
                onRename={(title) => renameSession(apiKey, session.id, title).then(refresh)}
                onDelete={() =>
                  deleteSession(apiKey, session.id).then(() => {
                    if (selection.sessionId === session.id) setSelection(newSelection());
                    refresh();
                  })
                }
              />
            ))}
          </ul>
          {sessions.length > 0 && shown.length === 0 && <p className="empty">No session title matches.</p>}
          <SchedulesPanel apiKey={apiKey} />
        </div>
      </aside>
      <main>
        <Chat
          key={`${selection.view}:${apiKey === '' ? 'none' : 'key'}`}
          apiKey={apiKey}
          sessionId={selection.sessionId === selection.view ? selection.sessionId : undefined}
          newSession={{ mode, model }}
          defaultModel={models?.default ?? null}
          listedTitle={titleIn(sessions, selection.sessionId)}
          onSessionStarted={onSessionStarted}
          onRunSettled={refresh}
          onOpenSession={(sessionId) => {
            setSelection({ view: sessionId, sessionId });
            refresh();
          }}
        />
      </main>
    </div>
  );
}

/** The name the list gives the open session, when it is listed. */
function titleIn(sessions: readonly SessionSummary[], id: string | undefined): string | undefined {
  const listed = sessions.find((s) => s.id === id);
  return listed && titleOf(listed);
}

function titleOf(session: SessionSummary): string {
  return session.title ?? session.preview ?? 'Untitled session';
}

function SessionItem({
  session,
  selected,
  onOpen,
  onRename,
  onDelete,
}: {
  session: SessionSummary;
  selected: boolean;
  onOpen: () => void;
  onRename: (title: string) => Promise<unknown>;
  onDelete: () => Promise<unknown>;
}) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(session.title ?? '');
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const fail = (err: unknown) => setError(err instanceof Error ? err.message : String(err));

  const save = () => {
    if (title.trim() === '') return;
    onRename(title.trim()).then(() => setEditing(false), fail);
  };

  return (
    <li className={selected ? 'selected' : ''}>
      {editing ? (
        <form
          className="rename"
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <input
            aria-label="New title"
            value={title}
            maxLength={200}
            autoFocus
            onChange={(event) => setTitle(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') setEditing(false);
            }}
          />
          <button type="submit">Save</button>
        </form>
      ) : (
        <button type="button" className="open" onClick={onOpen} aria-current={selected ? 'true' : undefined}>
          <span className="title">{titleOf(session)}</span>
          <small>
            {new Date(session.createdAt).toLocaleString()}
            {session.model !== null && ` · ${session.model}`}
          </small>
        </button>
      )}
      <div className="item-actions">
        {!editing && (
          <button
            type="button"
            className="quiet"
            aria-label="Rename session"
            title="Rename"
            onClick={() => setEditing(true)}
          >
            Rename
          </button>
        )}
        {confirming ? (
          <button type="button" className="danger" onClick={() => void onDelete().catch(fail)}>
            Confirm delete
          </button>
        ) : (
          <button
            type="button"
            className="quiet"
            aria-label="Delete session"
            title="Delete"
            onClick={() => setConfirming(true)}
          >
            Delete
          </button>
        )}
      </div>
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}
