import { describe, expect, it } from 'vitest';
import { Deadline, sleep } from '../../src/gateway/deadline.js';
import { onAbort, RequestSignal, toAbortSignal } from '../../src/lib/cancel.js';

describe('RequestSignal', () => {
  it('aborts once, with its reason, and tells each listener once', () => {
    const signal = new RequestSignal();
    const heard: string[] = [];
    onAbort(signal, () => heard.push('a'));
    const stop = onAbort(signal, () => heard.push('b'));
    stop();
    signal.abort('first');
    signal.abort('second');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('first');
    expect(heard).toEqual(['a']);
  });

  it('hands out an AbortSignal that follows it, made before or after the abort', () => {
    const early = new RequestSignal();
    const linked = toAbortSignal(early);
    expect(linked).toBeInstanceOf(AbortSignal);
    expect(toAbortSignal(early)).toBe(linked);
    early.abort('stop');
    expect(linked.aborted).toBe(true);
    expect(linked.reason).toBe('stop');
    const late = new RequestSignal();
    late.abort('gone');
    expect(toAbortSignal(late).reason).toBe('gone');
    const plain = new AbortController().signal;
    expect(toAbortSignal(plain)).toBe(plain);
  });

  it('is followed by a deadline and by sleep, as an AbortSignal is', async () => {
    for (const parent of [new RequestSignal(), new AbortController()]) {
      const deadline = new Deadline(parent instanceof AbortController ? parent.signal : parent, 60_000);
      deadline.start();
      const waiting = sleep(60_000, parent instanceof AbortController ? parent.signal : parent);
      parent.abort('cancelled');
      expect(deadline.signal.aborted).toBe(true);
      expect(deadline.signal.reason).toBe('cancelled');
      await expect(waiting).rejects.toMatchObject({ kind: 'aborted' });
      deadline.clear();
    }
  });

  it('times a deadline out, and a cleared one no longer follows its parent', async () => {
    const timed = new Deadline(undefined, 5);
    timed.start();
    await new Promise((r) => setTimeout(r, 30));
    expect((timed.signal.reason as Error).name).toBe('TimeoutError');
    const parent = new RequestSignal();
    const cleared = new Deadline(parent, 60_000);
    cleared.start();
    cleared.clear();
    parent.abort('late');
    expect(cleared.signal.aborted).toBe(false);
    expect(parent.listenerCount('abort')).toBe(0);
  });
});
