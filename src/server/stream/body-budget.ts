/**
 * Bytes of request bodies being received, not yet parsed. Each body is bounded on its own,
 * but how many arrive at once is the clients' choice: bodies held one byte short of
 * complete would otherwise buffer that bound times the connections.
 */
export class BodyBudget {
  #receiving = 0;

  /** Bytes of request bodies being received now. */
  get receiving(): number {
    return this.#receiving;
  }

  /** Takes `bytes` more, unless that would pass `limit`: false then, and nothing is taken. */
  take(bytes: number, limit: number): boolean {
    if (this.#receiving + bytes > limit) return false;
    this.#receiving += bytes;
    return true;
  }

  /** Gives back `bytes` taken earlier (a body parsed, refused or abandoned). */
  give(bytes: number): void {
    this.#receiving -= bytes;
  }
}
