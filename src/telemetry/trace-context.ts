/**
 * Trace context in `params._meta`, where the MCP specification reserves `traceparent`,
 * `tracestate` and `baggage` (unprefixed), so a client's span is the parent of the server's
 * whatever transport, retries or replicas a request went through. Uses the application's
 * registered propagator (the API's default propagates nothing).
 */
import { context, propagation, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';

type Meta = Record<string, unknown>;

const getter: TextMapGetter<Meta> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

const setter: TextMapSetter<Meta> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The context a message's `params._meta` carries (the active one when it carries none). */
export function extractFromMeta(params: unknown): Context {
  const meta = isObject(params) ? params['_meta'] : undefined;
  if (!isObject(meta)) return context.active();
  return propagation.extract(context.active(), meta, getter);
}

/**
 * `params` with `ctx` injected into its `_meta` (a copy: the caller's object is not changed);
 * `params` itself when the propagator has nothing to add.
 */
export function injectIntoMeta(params: Record<string, unknown> | undefined, ctx: Context): Record<string, unknown> | undefined {
  const carrier: Meta = {};
  propagation.inject(ctx, carrier, setter);
  if (Object.keys(carrier).length === 0) return params;
  const meta = isObject(params?.['_meta']) ? params['_meta'] : {};
  return { ...params, _meta: { ...meta, ...carrier } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
