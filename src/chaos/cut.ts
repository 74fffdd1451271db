/**
 * Where to cut a response, decided chunk by chunk. Pure: the proxies feed what passes
 * through and act on the answer, so the counting (markers and event terminators across
 * chunk boundaries) is tested without sockets.
 */

/** Decides, for each chunk, how much of it passes before the cut. */
export interface CutCounter {
  /** Bytes of `chunk` to forward before cutting, or `undefined`: forward all of it, no cut yet. */
  feed(chunk: Buffer): number | undefined;
  /** Events seen so far (counted by their blank-line terminator; 0 where events are not counted). */
  readonly events: number;
  /** Bytes forwarded so far, the cut's head included once it happened. */
  readonly bytes: number;
}

/** Never cuts. */
export const NO_CUT: CutCounter = { feed: () => undefined, events: 0, bytes: 0 };

/**
 * Cuts after `cutAfterBytes` bytes, counted from the first occurrence of `after` when given
 * (say, a marker that appears only inside event data), so cuts land mid-stream.
 */
export function byteCut(cutAfterBytes: number | undefined, after?: string): CutCounter {
  if (cutAfterBytes === undefined) return NO_CUT;
  let counted = 0;
  let total = 0;
  let armed = after === undefined;
  let seen = '';
  return {
    feed(chunk) {
      let from = 0;
      if (!armed && after !== undefined) {
        // Look for the marker across chunk boundaries; count from where it starts.
        seen = (seen + chunk.toString('latin1')).slice(-(chunk.length + after.length));
        const at = seen.indexOf(after);
        if (at < 0) {
          total += chunk.length;
          return undefined;
        }
        armed = true;
        // Count from the marker's first byte, even when earlier chunks already carried part of it.
        const inChunk = at - (seen.length - chunk.length);
        from = Math.max(inChunk, 0);
        counted = Math.max(-inChunk, 0);
      }
      if (counted + chunk.length - from < cutAfterBytes) {
        counted += chunk.length - from;
        total += chunk.length;
        return undefined;
      }
      const end = Math.max(from, from + cutAfterBytes - counted);
      counted = cutAfterBytes;
      total += end;
      return end;
    },
    get events() {
      return 0;
    },
    get bytes() {
      return total;
    },
  };
}

/** Cuts after `cutAfterEvents` SSE events or `cutAfterBytes` bytes, whichever comes first. */
export function eventCut(cutAfterEvents: number | undefined, cutAfterBytes: number | undefined): CutCounter {
  if (cutAfterEvents === undefined && cutAfterBytes === undefined) return NO_CUT;
  let events = 0;
  let bytes = 0;
  let tail = '';
  return {
    feed(chunk) {
      let end = chunk.length;
      if (cutAfterBytes !== undefined && bytes + end >= cutAfterBytes) end = cutAfterBytes - bytes;
      let reached = end < chunk.length || (cutAfterBytes !== undefined && bytes + end >= cutAfterBytes);
      if (cutAfterEvents !== undefined && events >= cutAfterEvents) reached = true;
      else if (cutAfterEvents !== undefined) {
        // Find the Nth event terminator (a blank line), across chunk boundaries.
        const text = tail + chunk.toString('latin1');
        for (let from = 0; ;) {
          const at = text.indexOf('\n\n', from);
          if (at < 0) break;
          const inChunk = at + 2 - tail.length;
          if (inChunk > end) break;
          events++;
          from = at + 2;
          if (events >= cutAfterEvents) {
            end = Math.max(0, inChunk);
            reached = true;
            break;
          }
        }
        tail = text.slice(-1);
      }
      bytes += reached ? end : chunk.length;
      return reached ? end : undefined;
    },
    get events() {
      return events;
    },
    get bytes() {
      return bytes;
    },
  };
}
