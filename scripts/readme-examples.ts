/**
 * Shows the files under examples/ in README.md: each code block preceded by
 * `<!-- example: examples/NAME -->` is rewritten with that file's text, so the README never
 * shows a snippet that the tests did not run (test/examples/readme.test.ts fails on drift,
 * and on a TypeScript or JavaScript block without a marker).
 * Usage: node --import tsx scripts/readme-examples.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
// A marker, then one fenced block (possibly empty): the lazy body never runs past its own fence.
const MARKER = /<!-- example: (examples\/[\w./-]+) -->\n```(\w*)\n(?:[^\n]*\n)*?```/g;
const LANG: Record<string, string> = { ts: 'ts', js: 'js', mjs: 'js', json: 'json', sh: 'sh' };

/** The README with every marked block replaced by the current text of its file. */
export function render(readme: string, read: (path: string) => string = (path) => readFileSync(new URL(path, root), 'utf8')): string {
  return readme.replace(MARKER, (_block, path: string) => {
    const ext = path.slice(path.lastIndexOf('.') + 1);
    return `<!-- example: ${path} -->\n\`\`\`${LANG[ext] ?? ''}\n${read(path).trimEnd()}\n\`\`\``;
  });
}

/** The files the README shows. */
export function shownExamples(readme: string): string[] {
  return [...readme.matchAll(MARKER)].map((m) => m[1] as string);
}

/** TypeScript/JavaScript blocks that are not backed by a file under examples/. */
export function unmarkedCodeBlocks(readme: string): string[] {
  const problems: string[] = [];
  const lines = readme.split('\n');
  let inBlock = false;
  lines.forEach((line, i) => {
    const fence = /^```(\w*)/.exec(line);
    if (!fence) return;
    if (inBlock) {
      inBlock = false;
      return;
    }
    inBlock = true;
    const lang = fence[1] ?? '';
    if (['ts', 'typescript', 'js', 'javascript', 'mjs'].includes(lang) && !/^<!-- example: examples\//.test(lines[i - 1] ?? '')) {
      problems.push(`README.md:${i + 1}: a \`${lang}\` block without an <!-- example: examples/… --> marker`);
    }
  });
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const path = new URL('README.md', root);
  const readme = readFileSync(path, 'utf8');
  const next = render(readme);
  const unmarked = unmarkedCodeBlocks(next);
  for (const problem of unmarked) console.error(problem);
  if (process.argv.includes('--check')) {
    if (next !== readme) console.error('README.md is stale: run npm run examples:sync');
    if (next !== readme || unmarked.length > 0) process.exitCode = 1;
  } else {
    writeFileSync(path, next);
    if (unmarked.length > 0) process.exitCode = 1;
  }
}
