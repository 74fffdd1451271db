/**
 * `queueMacrotask` where the `node` condition holds (package.json `imports`, `#turn`): Node's
 * immediate runs after the I/O callbacks of the current loop iteration, with no minimum delay.
 */
import { setImmediate } from 'node:timers';

/** Runs `callback` in a later macrotask, after the I/O already received has been handled. */
export function queueMacrotask(callback: () => void): void {
  setImmediate(callback);
}
