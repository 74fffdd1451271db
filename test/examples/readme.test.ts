/** README.md shows the files under examples/, as they are; no code block without a file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { render, shownExamples, unmarkedCodeBlocks } from '../../scripts/readme-examples.js';
import { root } from './run.js';

const readme = readFileSync(`${root}README.md`, 'utf8');

test('README.md shows the current text of every example it names (npm run examples:sync)', () => {
  assert.equal(render(readme), readme, 'README.md is stale: run npm run examples:sync');
});

test('every TypeScript/JavaScript block of README.md is a file under examples/', () => {
  assert.deepEqual(unmarkedCodeBlocks(readme), []);
  const shown = shownExamples(readme);
  assert.ok(shown.includes('examples/server.ts') && shown.includes('examples/client.ts'), `shown: ${shown.join(', ')}`);
  for (const path of shown) assert.ok(existsSync(`${root}${path}`), `${path} exists`);
});
