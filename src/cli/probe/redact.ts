/**
 * Secrets never reach a report: values of `--header`, credentials in URLs (user info, and
 * query parameters named like keys or tokens) are replaced in every string of the report
 * before any renderer sees it. Pure.
 */

/** What replaces a secret. */
export const REDACTED = '[redacted]';

/** Query parameters whose values are credentials. */
const SECRET_PARAM =
  /^(?:access[_-]?token|api[_-]?key|apikey|auth|authorization|client[_-]?secret|code|key|password|pass|pwd|secret|sig|signature|token|x-api-key)$/i;

/** Authorization schemes: words, not secrets. */
const SCHEMES = new Set(['bearer', 'basic', 'digest', 'token', 'negotiate', 'dpop']);

/** Shorter strings are not redacted on their own (they would shred unrelated text). */
const MIN_SECRET = 4;

/** A URL without its user info, and what the user info means as an `authorization` header. */
export function splitCredentials(url: URL): { url: URL; authorization: string | undefined } {
  if (url.username === '' && url.password === '') return { url, authorization: undefined };
  const bare = new URL(url.href);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  bare.username = '';
  bare.password = '';
  return { url: bare, authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

/** The secrets in `headers` and `urls`: whole values, and their parts that are not scheme names. */
export function secretsOf(headers: Record<string, string>, urls: readonly URL[]): string[] {
  const found = new Set<string>();
  const add = (value: string): void => {
    if (value.length >= MIN_SECRET) found.add(value);
  };
  for (const value of Object.values(headers)) {
    add(value.trim());
    for (const part of value.split(/[\s,]+/)) if (!SCHEMES.has(part.toLowerCase())) add(part);
    const basic = /^basic\s+(\S+)$/i.exec(value.trim());
    if (basic?.[1] !== undefined) for (const part of Buffer.from(basic[1], 'base64').toString('utf8').split(':')) add(part);
  }
  for (const url of urls) {
    for (const part of [url.username, url.password]) {
      add(part);
      add(decodeURIComponent(part));
    }
    for (const [name, value] of url.searchParams) {
      if (SECRET_PARAM.test(name)) {
        add(value);
        add(encodeURIComponent(value));
      }
    }
  }
  // Longest first, so a secret that contains another is replaced whole.
  return [...found].sort((a, b) => b.length - a.length);
}

/** `text` with every secret replaced. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** A deep copy of `value` with every string (keys too) redacted. */
export function redact<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactText(k, secrets), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
