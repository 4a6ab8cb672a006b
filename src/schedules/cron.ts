import { CronExpressionParser } from 'cron-parser';

/** Why a cron or time zone cannot be used, or null when it can. */
export function cronProblem(cron: string, timezone: string): string | null {
  if (!isTimeZone(timezone))
    return `timezone ${JSON.stringify(timezone.slice(0, 64))} is not an IANA time zone`;
  // Five fields (minute to day of week): no seconds field, no @-macros.
  if (cron.length > 200 || cron.trim().split(/\s+/).length !== 5 || cron.includes('@')) {
    return 'cron must have five fields: minute, hour, day of month, month, day of week';
  }
  try {
    CronExpressionParser.parse(cron, { tz: timezone }).next();
    return null;
  } catch (err) {
    return `cron is not valid: ${err instanceof Error ? err.message.slice(0, 200) : 'unreadable'}`;
  }
}

/** The first due time of `cron` (read in `timezone`) after `after`. The cron must be valid (cronProblem). */
export function nextDueTime(cron: string, timezone: string, after: Date): Date {
  return CronExpressionParser.parse(cron, { tz: timezone, currentDate: after }).next().toDate();
}

function isTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
