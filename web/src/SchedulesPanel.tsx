import { useEffect, useState } from 'react';
import { listSchedules, type ScheduleSummary } from './api';

/** The key's schedules, read-only: when each runs next and what it sends (API.md, "Schedules and webhooks"). */
export function SchedulesPanel({ apiKey }: { apiKey: string }) {
  const [schedules, setSchedules] = useState<ScheduleSummary[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    listSchedules(apiKey).then(
      (list) => {
        if (!current) return;
        setSchedules(list);
        setError(null);
      },
      (err: unknown) => current && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      current = false;
    };
  }, [apiKey]);

  return (
    <section className="schedules" aria-label="Schedules">
      <h2>Schedules</h2>
      {error !== null && <p className="error">{error}</p>}
      {error === null && schedules.length === 0 && <p className="empty">No schedules.</p>}
      <ul>
        {schedules.map((s) => (
          <li key={s.id} className={s.enabled ? undefined : 'disabled'}>
            <code>{s.cron}</code> <span className="timezone">{s.timezone}</span>
            <div className="schedule-prompt">
              {s.prompt.length > 80 ? `${s.prompt.slice(0, 77)}…` : s.prompt}
            </div>
            <div className="schedule-next">
              {s.enabled && s.nextRunAt !== null
                ? `next ${new Date(s.nextRunAt).toLocaleString()}`
                : 'disabled'}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
