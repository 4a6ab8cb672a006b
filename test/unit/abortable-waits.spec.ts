import { AbortableWaits } from '../../src/common/abortable-waits';

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('AbortableWaits', () => {
  it('ends a wait when its wake is called, and only then', async () => {
    const waits = new AbortableWaits(new AbortController().signal);
    let wake: (() => void) | undefined;
    const wait = waits.next((w) => (wake = w));
    expect(await settled(wait)).toBe(false);
    wake!();
    expect(await settled(wait)).toBe(true);
    waits.dispose();
  });

  it('ends the pending wait when the signal aborts, and every later one at once', async () => {
    const controller = new AbortController();
    const waits = new AbortableWaits(controller.signal);
    const wait = waits.next(() => undefined);
    controller.abort();
    expect(await settled(wait)).toBe(true);
    expect(await settled(waits.next(() => undefined))).toBe(true);
  });

  it('listens to the signal once for all its waits, and not at all once disposed', async () => {
    const controller = new AbortController();
    const added = jest.spyOn(controller.signal, 'addEventListener');
    const removed = jest.spyOn(controller.signal, 'removeEventListener');
    const waits = new AbortableWaits(controller.signal);
    for (let i = 0; i < 3; i++) await waits.next((wake) => wake());
    expect(added).toHaveBeenCalledTimes(1);
    const pending = waits.next(() => undefined);
    waits.dispose();
    expect(removed).toHaveBeenCalledWith('abort', added.mock.calls[0][1]);
    // Disposing ends the wait in progress rather than leave it hanging.
    expect(await settled(pending)).toBe(true);
  });
});
