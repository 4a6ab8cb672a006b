import { Backoff, PeriodicTask, type Schedule } from '../../src/common/backoff';

/** A fake clock: what was scheduled, run by the test one at a time. */
class FakeSchedule {
  readonly waits: number[] = [];
  private pending: (() => void) | null = null;

  readonly schedule: Schedule = (fn, ms) => {
    this.waits.push(ms);
    this.pending = fn;
    return () => {
      if (this.pending === fn) this.pending = null;
    };
  };

  /** Runs what is due next and lets its task settle. */
  async fire(): Promise<void> {
    const fn = this.pending;
    this.pending = null;
    if (!fn) throw new Error('nothing scheduled');
    fn();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }

  get scheduled(): boolean {
    return this.pending !== null;
  }
}

describe('Backoff', () => {
  it('waits its period while tries succeed, doubles per failure up to 5 s, and is back at the period after a success', () => {
    const b = new Backoff(1000);
    expect(b.delayMs).toBe(1000);
    expect([b.failed(), b.failed(), b.failed(), b.failed(), b.failed()]).toEqual([
      2000, 4000, 5000, 5000, 5000,
    ]);
    b.succeeded();
    expect(b.delayMs).toBe(1000);
  });

  it('grows a short period from 500 ms, and never above a cap of its own', () => {
    const short = new Backoff(100);
    expect([short.failed(), short.failed(), short.failed(), short.failed()]).toEqual([
      1000, 2000, 4000, 5000,
    ]);
    const fixed = new Backoff(3333, 3333);
    expect([fixed.failed(), fixed.failed()]).toEqual([3333, 3333]);
    expect(new Backoff(10_000).failed()).toBe(10_000);
  });

  it('stays bounded after very many failures', () => {
    const b = new Backoff(1000);
    for (let i = 0; i < 10_000; i++) b.failed();
    expect(b.delayMs).toBe(5000);
  });
});

describe('PeriodicTask', () => {
  it('tries less often while its task fails and is back at its period once it succeeds', async () => {
    const clock = new FakeSchedule();
    let down = true;
    let tries = 0;
    const failures: unknown[] = [];
    const task = new PeriodicTask(
      () => {
        tries++;
        return down ? Promise.reject(new Error('connect ECONNREFUSED')) : Promise.resolve();
      },
      1000,
      (err) => failures.push(err),
      { schedule: clock.schedule, now: () => 0 },
    );
    task.start(true);
    for (let i = 0; i < 5; i++) await clock.fire();
    down = false;
    await clock.fire();
    await clock.fire();

    expect(tries).toBe(7);
    expect(failures).toHaveLength(5);
    // The first try at once; after each failure a longer wait, capped; the period after a success.
    expect(clock.waits).toEqual([0, 2000, 4000, 5000, 5000, 5000, 1000, 1000]);
  });

  it('runs one try at a time, each a period after the last began, and schedules nothing after stop', async () => {
    const clock = new FakeSchedule();
    let now = 0;
    let release: () => void = () => undefined;
    const task = new PeriodicTask(
      () => new Promise<void>((done) => (release = done)),
      1000,
      () => undefined,
      { schedule: clock.schedule, now: () => now },
    );
    task.start();
    expect(clock.waits).toEqual([1000]);
    await clock.fire();
    // The next try is scheduled only once this one has ended: 1000 ms after it began.
    expect(clock.scheduled).toBe(false);
    now += 300;
    release();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(clock.waits).toEqual([1000, 700]);
    // A try longer than the period is followed by the next at once.
    await clock.fire();
    now += 1500;
    release();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(clock.waits).toEqual([1000, 700, 0]);
    task.stop();
    expect(clock.scheduled).toBe(false);
  });
});
