/**
 * Naming of a session's request streams (1, 2, 3 … in base 36) and the bound on how many
 * completed ones are kept. A name below the counter that the log no longer holds was
 * dropped by that bound: its cursors get `replay-window-exceeded`, not `cursor-invalid`.
 */
export { STANDALONE_STREAM } from '../../protocol/event-id.js';
/** The stream that carries a session's messages after an upgrade offer. */
export const SOCKET_STREAM = '_ws'; // never a request stream's name (those are base-36 numbers)

export class StreamNames {
  #next = 1;
  /** Completed stream names, oldest first. */
  readonly #completed: string[] = [];
  readonly #keep: number;

  constructor(keep: number) {
    this.#keep = keep;
  }

  /** Continues where an earlier process stopped. */
  restore(next: number, completed: readonly string[]): void {
    this.#next = next;
    this.#completed.push(...completed);
  }

  next(): string {
    return (this.#next++).toString(36);
  }

  /** Did a stream of this name exist and get dropped? */
  wasDropped(stream: string): boolean {
    const n = parseInt(stream, 36);
    return /^[0-9a-z]+$/.test(stream) && n >= 1 && n < this.#next;
  }

  /** Records a completed stream; returns the name of one to drop, if over the bound. */
  completed(stream: string): string | undefined {
    this.#completed.push(stream);
    return this.#completed.length > this.#keep ? this.#completed.shift() : undefined;
  }

  /** The log was reset: nothing completed is kept any more. */
  forgetCompleted(): void {
    this.#completed.length = 0;
  }
}
