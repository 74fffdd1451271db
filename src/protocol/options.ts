/** Resolving groups of numeric options against their defaults, the same way everywhere. */

/**
 * `given` over `defaults`, every value checked to be a positive number. An option given as
 * `undefined` takes its default. Throws a RangeError naming `group.key` otherwise.
 */
export function resolvePositive<T extends Record<string, number>>(
  group: string,
  defaults: T,
  given: { readonly [K in keyof T]?: number | undefined } | undefined,
): T {
  const out: Record<string, unknown> = { ...defaults };
  for (const [k, v] of Object.entries(given ?? {})) if (v !== undefined) out[k] = v;
  for (const [k, v] of Object.entries(out)) {
    if (!(typeof v === 'number' && v > 0)) throw new RangeError(`${group}.${k} must be a positive number, got ${String(v)}`);
  }
  return out as T;
}
