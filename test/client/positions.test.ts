import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryCheckpoint } from '../../src/client/checkpoint.js';
import { StreamPositions } from '../../src/client/positions.js';

test('stream positions stay bounded however many requests a long-lived client makes', async () => {
  const store = memoryCheckpoint({ maxStreams: 10_000 });
  const positions = new StreamPositions(store, () => ({ sessionId: 's', protocolVersion: '2025-11-25', epoch: null, initialize: undefined, standalone: undefined }), () => {});
  const standalone = {};
  positions.markStandalone(standalone);
  positions.record(standalone, { stream: 'x', lastId: 'g-1', scheme: 'opaque' });
  for (let i = 0; i < 5000; i++) positions.record({}, { stream: 'x', lastId: `r-${i}`, scheme: 'opaque' }, i % 2 === 0);
  await positions.save();
  const saved = await store.load();
  const keys = Object.keys(saved?.streams ?? {});
  assert.ok(keys.length <= 256, `kept ${keys.length} positions`);
  assert.ok(keys.includes('standalone'), 'the standalone stream is never forgotten');
  assert.ok(keys.includes('request-5000'), 'the newest request is kept');
});
