/**
 * The layer rule in eslint.config.js refuses an import that goes back up, and lets the tree's own
 * imports through. Synthetic files are linted where they would sit; nothing is written to disk.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const root = fileURLToPath(new URL('../../', import.meta.url));

// Without type information: a synthetic file is in no tsconfig, and the layer rules read only the syntax.
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: 'eslint.config.js',
  overrideConfig: tseslint.configs.disableTypeChecked as Linter.Config,
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports' || ruleId === 'no-restricted-syntax',
});

/** The lint messages for one import line in a file at `filePath`. */
async function messagesFor(filePath: string, line: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${line}\nexport { a };\n`, { filePath });
  return result!.messages.map((message) => message.message);
}

async function refused(filePath: string, line: string, expected: string): Promise<void> {
  const messages = await messagesFor(filePath, line);
  assert.equal(messages.length, 1, `${filePath}: ${line} should be refused, got ${JSON.stringify(messages)}`);
  assert.match(messages[0]!, new RegExp(expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
}

async function allowed(filePath: string, line: string): Promise<void> {
  assert.deepEqual(await messagesFor(filePath, line), [], `${filePath}: ${line} should pass`);
}

describe('the server layers', () => {
  it('refuses an import from stream up to session, upgrade, cluster or the endpoint', async () => {
    await refused('src/server/stream/x.ts', "import { a } from '../session/session.js';", 'Layering: src/server/stream may not import src/server/session.');
    await refused('src/server/stream/x.ts', "import type { a } from '../upgrade/state.js';", 'may not import src/server/upgrade.');
    await refused('src/server/stream/x.ts', "export { a } from '../cluster/cluster.js';", 'may not import src/server/cluster.');
    await refused('src/server/stream/x.ts', "import { a } from '../endpoint.js';", 'may not import src/server/*.ts.');
    await refused('src/server/session/x.ts', "import { a } from '../cluster/placement.js';", 'src/server/session may not import src/server/cluster.');
    await refused('src/server/upgrade/x.ts', "import { a } from '../session/session.js';", 'src/server/upgrade may not import src/server/session.');
  });

  it('lets a layer import the layers below it and the core', async () => {
    await allowed('src/server/stream/x.ts', "import { a } from '../../protocol/errors.js';");
    await allowed('src/server/stream/x.ts', "import { a } from '../../store/types.js';");
    await allowed('src/server/stream/x.ts', "import { a } from './tail.js';");
    await allowed('src/server/session/x.ts', "import { a } from '../stream/tail.js';");
    await allowed('src/server/cluster/x.ts', "import { a } from '../session/session.js';");
    await allowed('src/server/x.ts', "import { a } from './cluster/cluster.js';");
  });

  it('refuses a client alias below the client, and lets the platform aliases through', async () => {
    await refused('src/server/stream/x.ts', "import { a } from '#client-upgrade';", 'may not import #client-upgrade');
    await allowed('src/server/stream/x.ts', "import { a } from '#turn';");
    await allowed('src/protocol/x.ts', "import { a } from '#crypto';");
    await refused('src/store/x.ts', "import { a } from '../platform/crypto-node.js';", 'reaches src/platform only through the package.json "imports" aliases');
  });
});

describe('the other folders', () => {
  it('keeps protocol, store and client off the layers above them', async () => {
    await refused('src/protocol/x.ts', "import { a } from '../store/index.js';", 'src/protocol may not import src/store.');
    await refused('src/store/redis/x.ts', "import { a } from '../../server/index.js';", 'src/store/redis may not import src/server/*.ts.');
    await refused('src/client/x.ts', "import { a } from '../server/host-guard.js';", 'src/client may not import src/server/*.ts.');
    await allowed('src/store/redis/x.ts', "import { a } from '../types.js';");
    await allowed('src/client/x.ts', "import { a } from '../protocol/headers.js';");
  });

  it('lets an adapter take a layer only through its public entry point', async () => {
    await refused('src/node/x.ts', "import { a } from '../server/endpoint.js';", 'src/node takes src/server/*.ts only through its public entry points');
    await refused('src/node/x.ts', "import { a } from '../server/stream/http.js';", 'src/node may not import src/server/stream.');
    await refused('src/frameworks/x.ts', "import { a } from '../node/adapter.js';", 'src/frameworks takes src/node only through its public entry points');
    await allowed('src/node/x.ts', "import { a } from '../server/index.js';");
    await allowed('src/frameworks/x.ts', "import { a } from '../node/index.js';");
  });

  it('lets the command line use the endpoint but not the layers under it', async () => {
    await allowed('src/cli/probe/x.ts', "import { a } from '../../server/endpoint.js';");
    await refused('src/cli/probe/x.ts', "import { a } from '../../server/session/session.js';", 'src/cli/probe may not import src/server/session.');
  });

  it('refuses a relative import() below the command line, which the import rule would not see', async () => {
    await refused('src/server/stream/x.ts', "const { a } = await import('../session/session.js');", 'Import statically');
  });
});

describe('the known exceptions', () => {
  it('let one import through for the file named, and no other', async () => {
    await allowed('src/node/websocket.ts', "import { a } from '../server/stream/http.js';");
    await refused('src/node/websocket.ts', "import { a } from '../server/stream/tail.js';", 'src/node may not import src/server/stream.');
    await refused('src/node/listen.ts', "import { a } from '../server/stream/http.js';", 'src/node may not import src/server/stream.');
  });

  it('are each still used, so a fixed one is dropped from the list', async () => {
    const config = (await import(new URL('../../eslint.config.js', import.meta.url).href)) as { LAYER_EXCEPTIONS: Record<string, string[]> };
    for (const [file, targets] of Object.entries(config.LAYER_EXCEPTIONS)) {
      const text = readFileSync(`${root}${file}`, 'utf8');
      for (const target of targets) {
        const name = target.split('/').slice(-2).join('/').replace(/\.ts$/, '.js');
        assert.ok(text.includes(`/${name}'`), `${file} no longer imports ${target}: remove it from LAYER_EXCEPTIONS in eslint.config.js`);
      }
    }
  });
});
