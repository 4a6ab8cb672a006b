import { FlushSchedule } from '../../src/events/flush-schedule';

describe('FlushSchedule', () => {
  let flushes: number;
  let schedule: FlushSchedule;

  beforeEach(() => {
    jest.useFakeTimers();
    flushes = 0;
    // As the sink does: a flush tells the schedule it started.
    schedule = new FlushSchedule(() => {
      flushes++;
      schedule.flushing();
    });
  });

  afterEach(() => {
    schedule.cancel();
    jest.useRealTimers();
  });

  it('flushes the first emit of a quiet stretch at the end of the turn, then at most once per 100 ms', () => {
    schedule.emitted(false);
    expect(flushes).toBe(0);
    jest.advanceTimersByTime(0);
    expect(flushes).toBe(1);
    jest.advanceTimersByTime(30);
    schedule.emitted(false);
    schedule.emitted(false);
    jest.advanceTimersByTime(69);
    expect(flushes).toBe(1);
    jest.advanceTimersByTime(1);
    expect(flushes).toBe(2);
    // Nothing emitted in the next window: it closes without a flush, and the next emit goes at once.
    jest.advanceTimersByTime(250);
    expect(flushes).toBe(2);
    schedule.emitted(false);
    jest.advanceTimersByTime(0);
    expect(flushes).toBe(3);
  });

  it('flushes at once when urgent, and counts the window from that flush', () => {
    schedule.emitted(false);
    jest.advanceTimersByTime(50);
    schedule.emitted(false);
    schedule.emitted(true);
    jest.advanceTimersByTime(0);
    expect(flushes).toBe(2);
    schedule.emitted(false);
    jest.advanceTimersByTime(99);
    expect(flushes).toBe(2);
    jest.advanceTimersByTime(1);
    expect(flushes).toBe(3);
  });

  it('starts the window at a flush made elsewhere (a commit), and flushes nothing once cancelled', () => {
    schedule.flushing();
    schedule.emitted(false);
    jest.advanceTimersByTime(99);
    expect(flushes).toBe(0);
    jest.advanceTimersByTime(1);
    expect(flushes).toBe(1);
    schedule.emitted(false);
    schedule.cancel();
    jest.advanceTimersByTime(500);
    expect(flushes).toBe(1);
  });
});
