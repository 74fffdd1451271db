import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { render } from '../../scripts/errors-doc.js';

test('docs/errors.md carries the current error table', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  assert.equal(render(doc), doc, 'docs/errors.md is stale: run node --import tsx scripts/errors-doc.ts');
});
