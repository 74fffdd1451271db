/**
 * The stores the harness runs on, as factories: add one here (Redis: a `redis://…` spec
 * with a random key prefix, durable: true) and every scenario that takes a store runs on it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
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

export const STORES: readonly StoreFactory[] = [memory, sqlite];
