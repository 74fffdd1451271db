/** Shape checks the checkpoint validators share (a restored checkpoint is untrusted input). */

/** Is `value` a plain JSON object: not null, not an array? */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Is `value` a string of at most `max` UTF-16 code units? */
export function isText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length <= max;
}
