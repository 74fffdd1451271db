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

/** Resolves after `ms`, or rejects with `onAbort()` once `signal` aborts; leaves no listener behind. */
export function sleep(ms: number, signal: AbortSignal, onAbort: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(onAbort());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = (): void => {
      clearTimeout(timer);
      reject(onAbort());
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}
