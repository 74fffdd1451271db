/** A suite's private temp directory, removed after the suite, and fresh database paths inside it. */
import { after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempFiles {
  readonly dir: string;
  /** A path no earlier call returned: `<tag>-<n>.db`. */
  path(tag?: string): string;
}

export function tempFiles(prefix: string): TempFiles {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  return { dir, path: (tag = 'db') => join(dir, `${tag}-${++files}.db`) };
}
