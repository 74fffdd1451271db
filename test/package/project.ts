/**
 * A user's first hour, reproduced: the package packed from a clean copy of this repository
 * (so `prepack` must build), installed into an empty project from the local npm cache.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], cwd: string, timeoutMs = 120_000): Run {
  const out = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, npm_config_update_notifier: 'false' } });
  return { status: out.status, stdout: out.stdout ?? '', stderr: `${out.stderr ?? ''}${out.error ? `\n${String(out.error)}` : ''}` };
}

function ok(result: Run, what: string): Run {
  if (result.status !== 0) throw new Error(`${what} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Copies the files git knows (tracked, or new and not ignored) to `dir`: a clean clone, without dist/. */
export function cleanCopy(root: string, dir: string): void {
  const files = ok(run('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], root), 'git ls-files')
    .stdout.split('\0')
    .filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(root, file))) continue; // deleted in the work tree, not yet committed
    if (file === 'node_modules' || file.startsWith('node_modules/')) continue; // a symlinked node_modules is not ignored by `node_modules/`
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(root, file), join(dir, file));
  }
  // The build needs the dev dependencies; they are not what is being tested.
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/** `npm pack` in `dir` (its `prepack` builds); returns the tarball's path. */
export function pack(dir: string, destination: string): string {
  mkdirSync(destination, { recursive: true });
  const result = ok(run('npm', ['pack', '--pack-destination', destination], dir), 'npm pack');
  const tarballs = readdirSync(destination).filter((f) => f.endsWith('.tgz'));
  if (tarballs.length !== 1) throw new Error(`npm pack left ${tarballs.length} tarballs in ${destination}: ${result.stdout}`);
  return join(destination, tarballs[0] as string);
}

/** The files in a tarball. */
export function tarballFiles(tarball: string): string[] {
  return ok(run('tar', ['tzf', tarball], dirname(tarball)), 'tar')
    .stdout.split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
}

function installedVersion(root: string, name: string): string | undefined {
  const path = join(root, 'node_modules', name, 'package.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version : undefined;
}

/**
 * An empty ESM project with the tarball installed, plus what compiling TypeScript needs
 * (`typescript`, `@types/node`) and any other package `extraImports` names, at the
 * versions this repository uses (so they come from the local cache).
 *
 * Install scripts are skipped: better-sqlite3's would compile SQLite (a minute); the
 * native addon this repository already built for the same version and Node is copied in.
 */
export function installInto(app: string, root: string, tarball: string, extraImports: string[]): void {
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'first-hour', private: true, type: 'module' }, null, 2)}\n`);
  const extras = ['typescript', '@types/node', ...extraImports].flatMap((name) => {
    const version = installedVersion(root, name);
    if (!version) throw new Error(`${name} is not installed in this repository: cannot pin it`);
    const types = name.startsWith('@') ? undefined : installedVersion(root, `@types/${name}`);
    return [`${name}@${version}`, ...(types ? [`@types/${name}@${types}`] : [])];
  });
  ok(run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball, ...extras], app, 240_000), 'npm install');
  const sqlite = 'better-sqlite3';
  const addon = join('node_modules', sqlite, 'build', 'Release', 'better_sqlite3.node');
  if (installedVersion(app, sqlite) === installedVersion(root, sqlite) && existsSync(join(root, addon))) {
    mkdirSync(dirname(join(app, addon)), { recursive: true });
    cpSync(join(root, addon), join(app, addon));
  } else {
    ok(run('npm', ['rebuild', sqlite], app, 600_000), `npm rebuild ${sqlite}`);
  }
}

/** Bare package names a TypeScript file imports (`zod`, `@scope/pkg`), excluding `node:` builtins. */
export function importedPackages(source: string): string[] {
  const names = [...source.matchAll(/\bfrom '([^'./][^']*)'/g)].map((m) => m[1] as string).filter((s) => !s.startsWith('node:'));
  return [...new Set(names.map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : (s.split('/')[0] as string))))];
}
