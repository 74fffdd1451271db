/**
 * A process that opens a SQLite store and holds it: prints `ready <pid>` (or `error <code>
 * <message>` and exits 1), then waits until stdin closes, closes the store and exits.
 * Usage: node --import tsx test/store/sqlite-holder.ts FILE
 */
import { isContinuityError } from '../../src/protocol/errors.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';

const path = process.argv[2] as string;
try {
  const store = sqliteStore({ path });
  await store.sessions.create({ id: `s-${process.pid}`, epoch: 'e', pastEpochs: [], protocolVersion: 'v', initialize: '{}', createdAt: 0, lastActiveAt: 0 });
  console.log(`ready ${process.pid}`);
  process.stdin.resume();
  process.stdin.once('end', () => void store.close().then(() => process.exit(0)));
} catch (error) {
  console.log(`error ${isContinuityError(error) ? error.code : 'other'} ${(error as Error).message}`);
  process.exit(1);
}
