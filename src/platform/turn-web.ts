/**
 * `queueMacrotask` for browsers and Workers (package.json `imports`, `#turn` by default): a
 * zero-delay timer is the web's macrotask, queued after the events already received.
 * It keeps no port open (a `MessageChannel` would), and a runtime that cancels a request's
 * timers when the request ends cancels it with the rest, so nothing that uses it may
 * depend on it running.
 */

/** Runs `callback` in a later macrotask, after the I/O already received has been handled. */
export function queueMacrotask(callback: () => void): void {
  setTimeout(callback, 0);
}
