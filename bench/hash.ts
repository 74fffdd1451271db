/**
 * `node --import tsx bench/hash.ts [rounds]`: the content-hash candidates, per hash
 * of one buffer at 4 KiB and 64 KiB, natively and as WebAssembly, in one process and in
 * interleaved rounds (the machine is shared: a candidate measured alone at a quiet moment would
 * look better than one measured beside a build). Each cell prints the median µs per hash with
 * the lowest and highest round, plus a second SHA-256 `node:crypto` row as an A-vs-A control.
 *
 * The candidates that are not the project's dependencies (hash-wasm, xxhash-wasm,
 * @node-rs/xxhash) are devDependencies used here only; a candidate that fails to load is listed
 * as skipped, not dropped.
 */
import * as nodeCrypto from 'node:crypto';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { sha256 as ownSha256 } from '../src/platform/sha256.js';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';

type Hasher = (bytes: Uint8Array) => unknown;
interface Candidate {
  name: string;
  /** Where it runs: native code, WebAssembly, or JavaScript. */
  kind: string;
  hash?: Hasher;
  /** Async per call (WebCrypto): timed with an await per hash. */
  asyncHash?: (bytes: Uint8Array) => Promise<unknown>;
  skipped?: string;
}

const rounds = Number(process.argv[2] ?? 9);
const SIZES = [4096, 65536] as const;
type OneShot = (algorithm: string, data: Uint8Array, encoding: 'base64url') => string;
const oneShot = (nodeCrypto as { hash?: OneShot }).hash;

async function load(): Promise<Candidate[]> {
  const list: Candidate[] = [
    {
      name: 'SHA-256 node:crypto hash()',
      kind: 'native',
      hash: (b) => (oneShot ? oneShot('sha256', b, 'base64url') : nodeCrypto.createHash('sha256').update(b).digest('base64url')),
    },
    {
      name: 'SHA-256 node:crypto hash() (control)',
      kind: 'native',
      hash: (b) => (oneShot ? oneShot('sha256', b, 'base64url') : nodeCrypto.createHash('sha256').update(b).digest('base64url')),
    },
    { name: 'SHA-256 node:crypto createHash', kind: 'native', hash: (b) => nodeCrypto.createHash('sha256').update(b).digest() },
    { name: 'SHA-256 WebCrypto digest (async)', kind: 'native', asyncHash: (b) => globalThis.crypto.subtle.digest('SHA-256', b as Uint8Array<ArrayBuffer>) },
    { name: 'SHA-256 @noble/hashes', kind: 'JS', hash: (b) => nobleSha256(b) },
    { name: 'SHA-256 src/platform/sha256.ts (browsers, Workers)', kind: 'JS', hash: (b) => ownSha256(b) },
    { name: 'BLAKE3 @noble/hashes', kind: 'JS', hash: (b) => nobleBlake3(b) },
  ];
  try {
    const { xxh3 } = (await import('@node-rs/xxhash')) as { xxh3: { xxh128(input: Uint8Array): bigint } };
    list.push({ name: 'XXH3-128 @node-rs/xxhash', kind: 'native', hash: (b) => xxh3.xxh128(b) });
  } catch (e) {
    list.push({ name: 'XXH3-128 @node-rs/xxhash', kind: 'native', skipped: String(e) });
  }
  try {
    const hw = await import('hash-wasm');
    const x128 = await hw.createXXHash128();
    const b3 = await hw.createBLAKE3();
    const s256 = await hw.createSHA256();
    list.push({ name: 'XXH128 hash-wasm', kind: 'WebAssembly', hash: (b) => x128.init().update(b).digest('binary') });
    list.push({ name: 'BLAKE3 hash-wasm', kind: 'WebAssembly', hash: (b) => b3.init().update(b).digest('binary') });
    list.push({ name: 'SHA-256 hash-wasm', kind: 'WebAssembly', hash: (b) => s256.init().update(b).digest('binary') });
  } catch (e) {
    list.push({ name: 'hash-wasm', kind: 'WebAssembly', skipped: String(e) });
  }
  try {
    const { default: xxhash } = await import('xxhash-wasm');
    const api = await xxhash();
    list.push({ name: 'XXH64 xxhash-wasm', kind: 'WebAssembly', hash: (b) => api.h64Raw(b) });
  } catch (e) {
    list.push({ name: 'XXH64 xxhash-wasm', kind: 'WebAssembly', skipped: String(e) });
  }
  // Around the hash: what a store pays to keep a payload's UTF-8, encoding it from the
  // string (as before) or copying the bytes the hash's buffer already holds (encodedUtf8).
  const target = Buffer.allocUnsafe(65536 + 4);
  const encoder = new TextEncoder();
  const text = new Map<number, string>();
  const textOf = (b: Uint8Array): string => {
    let t = text.get(b.length);
    // A JSON-like ASCII payload of the buffer's length, built once per size.
    if (t === undefined) text.set(b.length, (t = JSON.stringify({ pad: 'x'.repeat(b.length - 10) }).slice(0, b.length)));
    return t;
  };
  list.push({ name: 'store UTF-8: Buffer write (encode)', kind: 'native', hash: (b) => target.write(textOf(b), 0) });
  list.push({ name: 'store UTF-8: TextEncoder encodeInto', kind: 'native', hash: (b) => encoder.encodeInto(textOf(b), target) });
  list.push({ name: 'store UTF-8: copy of held bytes (set)', kind: 'native', hash: (b) => target.set(b, 0) });
  // Text with a character past Latin-1 is a two-byte string, which encodes far slower.
  const wide = new Map<number, string>();
  const wideOf = (b: Uint8Array): string => {
    let t = wide.get(b.length);
    if (t === undefined) wide.set(b.length, (t = `€${'é'.repeat(b.length / 2 - 4)}`));
    return t;
  };
  list.push({ name: 'store UTF-8: Buffer write, text past Latin-1', kind: 'native', hash: (b) => target.write(wideOf(b), 0) });
  return list;
}

/** µs per hash over enough calls to take about `ms` milliseconds. */
async function time(c: Candidate, bytes: Uint8Array, ms: number): Promise<number> {
  let n = 0;
  const start = performance.now();
  let now = start;
  let sink: unknown;
  while (now - start < ms) {
    for (let i = 0; i < 16; i++) sink = c.hash ? c.hash(bytes) : await c.asyncHash?.(bytes);
    n += 16;
    now = performance.now();
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return ((now - start) * 1000) / n;
}

const candidates = await load();
const buffers = new Map(SIZES.map((size) => [size, nodeCrypto.randomBytes(size) as Uint8Array]));
const samples = new Map<string, number[]>();
const key = (c: Candidate, size: number): string => `${c.name}@${size}`;
// Warm-up: every candidate's code is compiled (or tiered up) before the first measured round.
for (const c of candidates) for (const size of SIZES) if (!c.skipped) await time(c, buffers.get(size) as Uint8Array, 50);
for (let round = 0; round < rounds; round++) {
  // Interleaved: each round visits every candidate, in an order that turns with the round.
  const order = candidates.map((_, i) => candidates[(i + round) % candidates.length] as Candidate);
  for (const c of order) {
    if (c.skipped) continue;
    for (const size of SIZES) {
      const us = await time(c, buffers.get(size) as Uint8Array, 40);
      samples.set(key(c, size), [...(samples.get(key(c, size)) ?? []), us]);
    }
  }
}
const cellText = (xs: number[] | undefined): string => {
  if (!xs || xs.length === 0) return 'skipped';
  const s = [...xs].sort((a, b) => a - b);
  const med = s[Math.floor(s.length / 2)] as number;
  const digits = med < 10 ? 2 : 1;
  return `${med.toFixed(digits)} µs (${(s[0] as number).toFixed(digits)}–${(s[s.length - 1] as number).toFixed(digits)})`;
};
console.log(`Node ${process.versions.node}, ${rounds} interleaved rounds; median µs per hash (lowest–highest round)\n`);
console.log('| hash (or operation) | runs as | 4 KiB | 64 KiB |');
console.log('|---|---|---|---|');
for (const c of candidates) {
  if (c.skipped) {
    console.log(`| ${c.name} | ${c.kind} | skipped: ${c.skipped.split('\n')[0]} | |`);
    continue;
  }
  console.log(`| ${c.name} | ${c.kind} | ${cellText(samples.get(key(c, 4096)))} | ${cellText(samples.get(key(c, 65536)))} |`);
}
