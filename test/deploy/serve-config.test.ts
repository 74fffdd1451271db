/**
 * `serve` on Redis: a replica whose lease disagrees with the running one refuses to start
 * in one line, and a password in `--store` appears in no output (banner, usage errors,
 * startup errors).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomPrefix, redisOrSkip, startRedis, type RedisServer } from '../helpers/redis.js';
import { runCli, startCli, stop } from '../cli/run-cli.js';
import type { ChildProcess } from 'node:child_process';

const SECRET = 'secretpw4711';
let redis: RedisServer | undefined;
const children: ChildProcess[] = [];

before(async () => {
  // An ACL user with a password (the default user stays open, for the helpers' PING).
  if (await redisOrSkip('the serve config tests')) redis = await startRedis(['--user', 'alice', 'on', `>${SECRET}`, '~*', '&*', '+@all']);
});
after(async () => {
  await Promise.all(children.map((c) => stop(c)));
  await redis?.stop();
});

test('the banner names the store without its password; a second replica with another lease refuses in one line', { timeout: 60_000 }, async (t) => {
  if (!redis) return t.skip('no Redis');
  const store = `redis://alice:${SECRET}@127.0.0.1:${redis.port}/0?prefix=${randomPrefix('cfg')}`;
  const first = await startCli(['serve', '--port', '0', '--store', `${store}&leaseMs=1000`]);
  children.push(first.child);
  assert.match(first.line, /\(store: redis:\/\/alice:\*\*\*@127\.0\.0\.1:\d+\/0\?prefix=/);
  assert.doesNotMatch(first.output(), new RegExp(SECRET));

  const second = await runCli(['serve', '--port', '0', '--store', `${store}&leaseMs=2000`], { timeoutMs: 30_000 });
  assert.equal(second.code, 1, second.stderr);
  assert.equal(second.stderr.trim().split('\n').length, 1, `one line: ${second.stderr}`);
  assert.match(
    second.stderr,
    /^mcp-continuity: This replica's Redis store \(prefix "[^"]+", leaseMs 2000\) disagrees with a running replica's \(prefix "[^"]+", leaseMs 1000\)/,
  );
  assert.doesNotMatch(second.stdout + second.stderr, new RegExp(SECRET));
});

test('usage and startup errors never repeat the password', { timeout: 60_000 }, async (t) => {
  if (!redis) return t.skip('no Redis');
  const usage = await runCli(['serve', '--port', '0', '--store', `redis://alice:${SECRET}@127.0.0.1:${redis.port}?nope=1`]);
  assert.equal(usage.code, 2, usage.stderr);
  assert.match(usage.stderr, /unknown option "nope".*redis:\/\/alice:\*\*\*@/);
  const badHost = await runCli(['serve', '--port', '0', '--store', `redis://alice:${SECRET}@127.0.0.1:${redis.port}/x/y`]);
  assert.equal(badHost.code, 2);
  assert.match(badHost.stderr, /:\*\*\*@/);
  const wrong = await runCli(['serve', '--port', '0', '--store', `redis://alice:wrong${SECRET}@127.0.0.1:${redis.port}`], { timeoutMs: 30_000 });
  assert.equal(wrong.code, 1, wrong.stderr);
  for (const r of [usage, badHost, wrong]) assert.doesNotMatch(r.stdout + r.stderr, new RegExp(SECRET), r.stderr);
});
