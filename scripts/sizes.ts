/**
 * Lists the classes and functions in src/ that are too long to read at once: classes over
 * 300 lines, functions (declarations, methods, arrows, function expressions) over 80.
 * Lengths count every line from the declaration's first to its last, comments included.
 * Usage: node --import tsx scripts/sizes.ts [--check] [--class N] [--function N] [DIR]
 * With --check it exits 1 when anything is listed, so it can run as a gate.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface Oversized {
  kind: 'class' | 'function';
  file: string;
  name: string;
  line: number;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(source);
  // An anonymous function takes the name it is bound to, if any.
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source);
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '<anonymous>';
}

/** The oversized classes and functions of one file's text. */
export function measure(file: string, text: string, limits: { classLines: number; functionLines: number }): Oversized[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Oversized[] = [];
  const visit = (node: ts.Node): void => {
    const isClass = ts.isClassDeclaration(node) || ts.isClassExpression(node);
    const isFunction = ts.isFunctionLike(node) && (node as { body?: ts.Node }).body !== undefined;
    if (isClass || isFunction) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const limit = isClass ? limits.classLines : limits.functionLines;
      if (lines > limit) {
        found.push({ kind: isClass ? 'class' : 'function', file, name: nameOf(node, source), line: first + 1, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function main(argv: string[]): number {
  let classLines = 300;
  let functionLines = 80;
  let check = false;
  let dir = 'src';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') check = true;
    else if (arg === '--class') classLines = Number(argv[++i]);
    else if (arg === '--function') functionLines = Number(argv[++i]);
    else if (arg !== undefined) dir = arg;
  }
  const found = sourceFiles(dir).flatMap((file) => measure(relative(process.cwd(), file), readFileSync(file, 'utf8'), { classLines, functionLines }));
  for (const item of found) {
    console.log(`${item.kind.padEnd(8)} ${String(item.lines).padStart(4)} lines  ${item.file}:${item.line}  ${item.name}`);
  }
  if (found.length === 0) console.log(`nothing over ${classLines} lines (class) or ${functionLines} lines (function) in ${dir}`);
  return check && found.length > 0 ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
