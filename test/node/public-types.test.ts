/**
 * The published declarations of the Node adapter and the framework adapters import no
 * type package users may lack (`ws`, the frameworks): without `skipLibCheck` a missing
 * `@types/*` would be TS7016. Reads `dist/`, which `npm test` builds first.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { it } from 'node:test';

const dirs = ['node', 'frameworks'].map((d) => new URL(`../../dist/${d}/`, import.meta.url));

it('dist/node and dist/frameworks .d.ts import neither ws nor a framework', () => {
  for (const dir of dirs) {
    assert.ok(existsSync(dir), `${dir.pathname} is missing: run npm run build first`);
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.d.ts'))) {
      const text = readFileSync(new URL(name, dir), 'utf8');
      const imported = [...text.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1] as string);
      const foreign = imported.filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:'));
      assert.deepEqual(foreign, [], `${name} imports ${foreign.join(', ')}`);
    }
  }
});
