import type { StoredMessage } from './api';

/** A session's stored conversation (GET /v1/sessions/:id), as text: nothing in it is ever HTML. */
export function History({ messages }: { messages: readonly StoredMessage[] }) {
  const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content]));
  return (
    <>
      {messages
        .filter((m) => m.role === 'user' || m.role === 'assistant')
        .map((m) => (
          <article key={m.id} className={`message ${m.role} stored`}>
            {m.content !== null && m.content !== '' && <div className="text">{m.content}</div>}
            {m.toolCalls?.map((call) => (
              <section key={call.id} className="tool-card stored" aria-label={`Tool call ${call.name}`}>
                <header>
                  <strong className="tool-name">{call.name}</strong>
                </header>
                <pre className="tool-arguments">{formatArguments(call.arguments)}</pre>
                <pre className="tool-result">{results.get(call.id) ?? ''}</pre>
              </section>
            ))}
          </article>
        ))}
    </>
  );
}

/** Stored arguments are the model's JSON text; shown indented when they parse, as given otherwise. */
function formatArguments(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value, null, 2);
  try {
    return JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    return value;
  }
}
