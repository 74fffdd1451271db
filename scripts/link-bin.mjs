/**
 * `prepare` (after `npm ci` in a clone): puts this package's own CLI on the project's
 * `node_modules/.bin`, so `npx mcp-continuity …` runs the checkout's build, as it does in a
 * project that installed the package. Nothing happens outside this checkout.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { bin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const binDir = join(root, 'node_modules', '.bin');
if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(binDir, { recursive: true });
  for (const [name, target] of Object.entries(bin)) {
    const file = join(root, target);
    if (!existsSync(file)) continue;
    chmodSync(file, 0o755);
    const link = join(binDir, name);
    rmSync(link, { force: true });
    symlinkSync(relative(binDir, file), link);
  }
}
