import { useEffect, useState } from 'react';
import { authHeaders } from './api';

/** What the UI message stream does not carry, read from the run's own event stream. */
export interface ToolCallExtras {
  output: string;
  durationMs?: number;
}

const RETRY_MS = 1000;

/**
 * Follows `GET /v1/runs/:id/events` beside useChat for the live output of commands
 * (`tool_call_output`) and each call's duration (`tool_call_result.durationMs`). Resumes after a
 * dropped connection from the last event it saw, so no chunk is shown twice.
 */
export function useRunExtras(key: string, runId: string | undefined): ReadonlyMap<string, ToolCallExtras> {
  const [extras, setExtras] = useState<ReadonlyMap<string, ToolCallExtras>>(new Map());

  useEffect(() => {
    setExtras(new Map());
    if (runId === undefined) return;
    const abort = new AbortController();
    let after = 0;
    let ended = false;

    const apply = (event: RunEvent): void => {
      after = event.seq;
      if (event.type === 'done' || event.type === 'error') ended = true;
      if (event.type !== 'tool_call_output' && event.type !== 'tool_call_result') return;
      const id = event.toolCallId;
      if (typeof id !== 'string') return;
      setExtras((previous) => {
        const next = new Map(previous);
        const current = next.get(id) ?? { output: '' };
        next.set(
          id,
          event.type === 'tool_call_output'
            ? { ...current, output: current.output + (typeof event.chunk === 'string' ? event.chunk : '') }
            : { ...current, durationMs: typeof event.durationMs === 'number' ? event.durationMs : undefined },
        );
        return next;
      });
    };

    const follow = async (): Promise<void> => {
      while (!ended && !abort.signal.aborted) {
        try {
          const response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/events?after=${after}`, {
            headers: authHeaders(key),
            signal: abort.signal,
          });
          if (response.status === 204 || !response.ok || response.body === null) return;
          await readEvents(response.body, apply);
        } catch {
          // A dropped connection: try again from the last event seen.
        }
        if (!ended) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    };
    void follow();
    return () => abort.abort();
  }, [key, runId]);

  return extras;
}

interface RunEvent {
  type: string;
  seq: number;
  toolCallId?: unknown;
  chunk?: unknown;
  durationMs?: unknown;
}

async function readEvents(body: ReadableStream<Uint8Array>, apply: (event: RunEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data !== '') apply(JSON.parse(data) as RunEvent);
    }
  }
}
