import { cronProblem, nextDueTime } from '../../src/schedules/cron';

describe('schedule cron', () => {
  it('takes five fields and an IANA time zone, nothing else', () => {
    expect(cronProblem('* * * * *', 'UTC')).toBeNull();
    expect(cronProblem('0 9 * * 1-5', 'Europe/Berlin')).toBeNull();
    expect(cronProblem('61 * * * *', 'UTC')).toMatch(/not valid/);
    expect(cronProblem('* * * *', 'UTC')).toMatch(/five fields/);
    expect(cronProblem('* * * * * *', 'UTC')).toMatch(/five fields/);
    expect(cronProblem('@daily', 'UTC')).toMatch(/five fields/);
    expect(cronProblem('* * * * *', 'Mars/Base')).toMatch(/time zone/);
  });

  it('reads the cron in its time zone', () => {
    // 09:00 in Berlin in December is 08:00 UTC.
    expect(nextDueTime('0 9 * * *', 'Europe/Berlin', new Date('2026-12-02T05:00:00Z')).toISOString()).toBe(
      '2026-12-02T08:00:00.000Z',
    );
    expect(nextDueTime('* * * * *', 'UTC', new Date('2026-12-02T05:00:30Z')).toISOString()).toBe(
      '2026-12-02T05:01:00.000Z',
    );
  });
});
