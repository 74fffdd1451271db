/**
 * What this process knows Redis holds for each session it owns: the number of its writes
 * Redis acknowledged. Every fenced write raises a counter kept with the session's lease
 * (`w`), in the same script as the write; a script that finds the counter below what this
 * process saw acknowledged knows the store went back in time (a failover to a replica that
 * had not received those writes, a restored backup) and ends the session instead of
 * continuing it silently. Pure bookkeeping, no I/O.
 *
 * The floor only rises by writes this process saw acknowledged, so concurrent writes, and
 * writes whose reply was lost (applied or not), never make it overshoot.
 */
export class WriteFloors {
  readonly #floors = new Map<string, { token: number; floor: number }>();
  readonly #max: number;

  /** `max`: sessions remembered at most (the least recently acquired are forgotten first). */
  constructor(max = 100_000) {
    this.#max = max;
  }

  /**
   * This process took (or extended) the lease of `session`; `written` is the counter Redis
   * holds. Taken back under the same token (the process let it go, say while Redis was
   * unreachable), the floor it knew still holds, so a store that lost writes meanwhile is
   * noticed on the next write or renewal.
   */
  acquired(session: string, token: number, written: number): void {
    const known = this.#floors.get(session);
    const floor = known !== undefined && known.token === token ? Math.max(known.floor, written) : written;
    this.#floors.delete(session);
    this.#floors.set(session, { token, floor });
    if (this.#floors.size > this.#max) {
      const oldest = this.#floors.keys().next();
      if (!oldest.done) this.#floors.delete(oldest.value);
    }
  }

  /** The fence argument of a write: `token:floor` when the floor under this token is known. */
  fenceArg(session: string, fence: number | undefined): string {
    if (fence === undefined) return '';
    const known = this.#floors.get(session);
    return known !== undefined && known.token === fence ? `${fence}:${known.floor}` : String(fence);
  }

  /** The floor for a renewal under `token`, or '' when unknown. */
  floorArg(session: string, token: number): string {
    const known = this.#floors.get(session);
    return known !== undefined && known.token === token ? String(known.floor) : '';
  }

  /** A fenced write under `fence` was acknowledged. */
  acked(session: string, fence: number | undefined): void {
    if (fence === undefined) return;
    const known = this.#floors.get(session);
    if (known !== undefined && known.token === fence) known.floor++;
  }

  /** `session` is gone, or another owner took it: nothing to remember. */
  forget(session: string): void {
    this.#floors.delete(session);
  }

  get size(): number {
    return this.#floors.size;
  }
}
