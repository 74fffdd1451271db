// Preloaded (NODE_OPTIONS=--import) by the Node 22 test run. better-sqlite3's addon is built
// for one Node ABI, and the checkout's copy is Node 20's: rebuilding it in place would break
// every Node 20 process sharing node_modules. So a second copy, built for Node 22, lives in
// BETTER_SQLITE3_NODE22 (a directory holding node_modules/better-sqlite3), and this hook sends
// every better-sqlite3 there: the checkout's own, and the copies the packed-package tests
// install into their projects (Node 20 builds too). A resolution that fails (the
// optional-dependency tests) is left as it is.
import { registerHooks } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const copy = process.env.BETTER_SQLITE3_NODE22;
const MARKER = '/node_modules/better-sqlite3/';

if (copy) {
  const target = pathToFileURL(join(copy, 'node_modules', 'better-sqlite3') + '/').href;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      const at = resolved.url.lastIndexOf(MARKER);
      if (at < 0 || resolved.url.startsWith(target)) return resolved;
      return { ...resolved, url: target + resolved.url.slice(at + MARKER.length) };
    },
  });
}
