/**
 * Tagged JSON: JSON text that brings back what plain JSON turns into something else, so a
 * value carried between replicas reaches the other side with the same shape (a `URL`
 * stays a `URL`, a `Date` a `Date`). Pure, no engine-specific serializer: it runs wherever
 * the endpoint runs.
 *
 * A value JSON cannot keep becomes `{"$": tag, "v": …}`: `D` Date (ms, null if invalid),
 * `U` URL, `u` undefined, `n` NaN/±Infinity/-0, `b` bigint, `M` Map, `S` Set, `B`
 * Uint8Array. A plain object that has a `$` key of its own is wrapped as `{"$": "o", "v": …}`,
 * so no data can pass for a tag. Everything else is as JSON would have it (functions and
 * symbols left out, `toJSON` honoured, other class instances as their own enumerable
 * properties). Cycles and nesting past {@link MAX_DEPTH} throw a `TypeError`.
 */

/** Deepest nesting encoded or decoded. */
export const MAX_DEPTH = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `value` as tagged JSON text. */
export function encodeTagged(value: unknown): string {
  return JSON.stringify(toTree(value, 0, new Set()) ?? null);
}

/** The value encoded by {@link encodeTagged}; throws on text that is not tagged JSON. */
export function decodeTagged(text: string): unknown {
  return fromTree(JSON.parse(text) as Json, 0);
}

const tag = (t: string, v?: Json): Json => (v === undefined ? { $: t } : { $: t, v });

/** The JSON tree of `value`; `undefined` for what JSON leaves out (a function, a symbol). */
function toTree(value: unknown, depth: number, seen: Set<object>): Json | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? value : tag('n', String(Object.is(value, -0) ? '-0' : value));
    case 'bigint':
      return tag('b', value.toString());
    case 'undefined':
      return tag('u');
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      break; // null, arrays and plain objects: below
  }
  if (value === null) return null;
  if (depth >= MAX_DEPTH) throw new TypeError(`Tagged JSON: nested deeper than ${MAX_DEPTH}`);
  const object = value;
  if (seen.has(object)) throw new TypeError('Tagged JSON: a value refers to itself');
  seen.add(object);
  try {
    return objectTree(object, depth + 1, seen);
  } finally {
    seen.delete(object);
  }
}

function objectTree(value: object, depth: number, seen: Set<object>): Json | undefined {
  if (value instanceof Date) {
    const ms = value.getTime();
    return tag('D', Number.isNaN(ms) ? null : ms);
  }
  if (value instanceof URL) return tag('U', value.href);
  if (value instanceof Uint8Array) return tag('B', Array.from(value));
  if (value instanceof Map)
    return tag(
      'M',
      [...value].map(([k, v]) => [toTree(k, depth, seen) ?? null, toTree(v, depth, seen) ?? null]),
    );
  if (value instanceof Set)
    return tag(
      'S',
      [...value].map((v) => toTree(v, depth, seen) ?? null),
    );
  if (Array.isArray(value)) return value.map((v: unknown) => toTree(v, depth, seen) ?? null);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return toTree(toJSON.call(value), depth, seen);
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(value)) {
    const tree = toTree(v, depth, seen);
    if (tree !== undefined) define(out, k, tree);
  }
  return Object.hasOwn(out, '$') ? tag('o', out) : out;
}

function fromTree(tree: Json, depth: number): unknown {
  if (tree === null || typeof tree !== 'object') return tree;
  if (depth >= MAX_DEPTH) throw new TypeError(`Tagged JSON: nested deeper than ${MAX_DEPTH}`);
  if (Array.isArray(tree)) return tree.map((t) => fromTree(t, depth + 1));
  if (!Object.hasOwn(tree, '$')) return plain(tree, depth);
  const v = tree.v;
  switch (tree.$) {
    case 'o':
      return plain(record(v), depth);
    case 'u':
      return undefined;
    case 'D':
      return new Date(v === null ? Number.NaN : number(v));
    case 'U':
      return new URL(string(v));
    case 'n':
      return string(v) === '-0' ? -0 : Number(string(v));
    case 'b':
      return BigInt(string(v));
    case 'B':
      return Uint8Array.from(array(v), (x) => number(x));
    case 'M':
      return new Map(
        array(v).map((pair) => {
          const [k, x] = array(pair);
          return [fromTree(k ?? null, depth + 1), fromTree(x ?? null, depth + 1)];
        }),
      );
    case 'S':
      return new Set(array(v).map((x) => fromTree(x, depth + 1)));
    default:
      throw new TypeError(`Tagged JSON: unknown tag ${JSON.stringify(tree.$).slice(0, 20)}`);
  }
}

function plain(tree: { [key: string]: Json }, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(tree)) define(out, k, fromTree(v, depth + 1));
  return out;
}

/** Sets an own property, even one named `__proto__`, without touching the prototype. */
function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function record(v: Json | undefined): { [key: string]: Json } {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new TypeError('Tagged JSON: malformed object');
  return v;
}
function array(v: Json | undefined): Json[] {
  if (!Array.isArray(v)) throw new TypeError('Tagged JSON: malformed list');
  return v;
}
function string(v: Json | undefined): string {
  if (typeof v !== 'string') throw new TypeError('Tagged JSON: malformed text');
  return v;
}
function number(v: Json | undefined): number {
  if (typeof v !== 'number') throw new TypeError('Tagged JSON: malformed number');
  return v;
}
