/**
 * The stores the harness runs on, as factories: every scenario that takes a store runs on
 * each. Redis is the machine's (127.0.0.1:6379, or REDIS_URL), each run under a key prefix
 * of its own that is deleted afterwards; the server runs the cluster ownership protocol on
 * it (a short lease, so a killed owner is replaced quickly).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createClient } from '@redis/client';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreFactory } from './types.js';

export const memory: StoreFactory = {
  name: 'memory',
  durable: false,
  create: () => Promise.resolve({ spec: 'memory', cleanup: () => Promise.resolve() }),
};

export const sqlite: StoreFactory = {
  name: 'sqlite',
  durable: true,
  create: () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-faults-'));
    return Promise.resolve({ spec: `sqlite:${join(dir, 'faults.db')}`, cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) });
  },
};

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Deletes every key under `prefix`. */
async function dropPrefix(prefix: string): Promise<void> {
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    client.destroy();
  }
}

export const redis: StoreFactory = {
  name: 'redis',
  durable: true,
  create: () => {
    const prefix = `faults-${randomBytes(6).toString('hex')}:`;
    return Promise.resolve({ spec: `${REDIS_URL}?prefix=${prefix}&leaseMs=1000`, cleanup: () => dropPrefix(prefix) });
  },
};

export const STORES: readonly StoreFactory[] = [memory, sqlite, redis];
