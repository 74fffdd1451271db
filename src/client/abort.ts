/**
 * Per-request abort signals linked to a long-lived one. `fetch` (undici) adds an abort
 * listener to the signal it is given and removes it only when the request is garbage
 * collected, so a long-lived signal passed to every reconnect collects listeners until
 * Node warns (`MaxListenersExceededWarning`). A linked signal carries exactly one
 * listener on the parent, removed as soon as the request is done with.
 */

export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes the listener on the parent; the request no longer follows it. */
  release: () => void;
}

export function linkSignal(parent: AbortSignal): LinkedSignal {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const onAbort = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', onAbort) };
}

/** Resolves after `ms`, or rejects with `onAbort()` once one of `signals` aborts; leaves no listener behind. */
export function sleep(ms: number, signals: AbortSignal | readonly (AbortSignal | undefined)[], onAbort: () => Error): Promise<void> {
  const all = (signals instanceof AbortSignal ? [signals] : signals).filter((s): s is AbortSignal => s !== undefined);
  return new Promise((resolve, reject) => {
    if (all.some((s) => s.aborted)) return reject(onAbort());
    const done = (): void => {
      for (const s of all) s.removeEventListener('abort', abort);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    const abort = (): void => {
      clearTimeout(timer);
      done();
      reject(onAbort());
    };
    for (const s of all) s.addEventListener('abort', abort, { once: true });
  });
}
