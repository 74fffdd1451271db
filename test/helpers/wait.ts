/**
 * Waiting on conditions, never on sleeps. Every wait has a deadline that only a deadlock
 * (or a real bug) can miss, and names what it waited for when it fails.
 */

/**
 * Polls `ready` until it returns a value other than `undefined`/`false`; fails naming `what`
 * after `timeoutMs` (a function is called only then, to describe the state at the failure).
 */
export async function waitFor<T>(
  ready: () => T | undefined | false | Promise<T | undefined | false>,
  what: string | (() => string),
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await ready();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** `promise`, or a failure naming `what` after `timeoutMs`: never an unbounded wait. */
export async function within<T>(promise: Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${timeoutMs} ms (deadlock?)`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
