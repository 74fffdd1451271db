import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkHostAndOrigin, isLoopbackHost, loopbackGuard, type HostGuardOptions } from '../../src/server/host-guard.js';
import { isContinuityError } from '../../src/protocol/errors.js';

function passes(guard: HostGuardOptions, host: string | null, origin: string | null): void {
  assert.doesNotThrow(() => checkHostAndOrigin(guard, host, origin), `${host} / ${origin}`);
}

function refused(guard: HostGuardOptions, host: string | null, origin: string | null, code: 'host-forbidden' | 'origin-forbidden'): void {
  assert.throws(
    () => checkHostAndOrigin(guard, host, origin),
    (err: unknown) => isContinuityError(err, code) && err.status === 403,
    `${host} / ${origin} should be ${code}`,
  );
}

describe('host-guard: checkHostAndOrigin', () => {
  it('an empty guard accepts anything, including missing headers', () => {
    passes({}, null, null);
    passes({}, 'evil.example', 'http://evil.example');
    passes({}, '', '');
  });

  it('allowedHosts: exact host:port, case-insensitive', () => {
    const guard: HostGuardOptions = { allowedHosts: ['localhost:3000', 'Example.COM:8443'] };
    passes(guard, 'localhost:3000', null);
    passes(guard, 'LOCALHOST:3000', null);
    passes(guard, 'example.com:8443', null);
    refused(guard, 'localhost:3001', null, 'host-forbidden');
    refused(guard, 'localhost', null, 'host-forbidden');
    refused(guard, 'evil.example:3000', null, 'host-forbidden');
    refused(guard, 'localhost:3000.evil.example', null, 'host-forbidden');
    refused(guard, 'xlocalhost:3000', null, 'host-forbidden');
    refused(guard, ' localhost:3000', null, 'host-forbidden');
    refused(guard, '', null, 'host-forbidden');
  });

  it('allowedHosts: a missing Host is refused', () => {
    refused({ allowedHosts: ['localhost:3000'] }, null, null, 'host-forbidden');
  });

  it('an empty allowedHosts list refuses every host', () => {
    refused({ allowedHosts: [] }, 'localhost:3000', null, 'host-forbidden');
  });

  it('allowedOrigins: requests without Origin pass', () => {
    passes({ allowedOrigins: ['http://localhost:3000'] }, 'anything', null);
    passes({ allowedOrigins: [] }, 'anything', null);
  });

  it('allowedOrigins: exact match, case-insensitive; everything else refused', () => {
    const guard: HostGuardOptions = { allowedOrigins: ['http://localhost:3000'] };
    passes(guard, null, 'http://localhost:3000');
    passes(guard, null, 'HTTP://LOCALHOST:3000');
    refused(guard, null, 'https://localhost:3000', 'origin-forbidden');
    refused(guard, null, 'http://localhost:3001', 'origin-forbidden');
    refused(guard, null, 'http://localhost', 'origin-forbidden');
    refused(guard, null, 'http://localhost:3000.evil.example', 'origin-forbidden');
    refused(guard, null, 'http://evil.example', 'origin-forbidden');
    refused(guard, null, 'null', 'origin-forbidden');
    refused(guard, null, '', 'origin-forbidden');
    refused({ allowedOrigins: [] }, null, 'http://localhost:3000', 'origin-forbidden');
  });

  it('the Host check runs first', () => {
    const guard: HostGuardOptions = { allowedHosts: ['localhost:3000'], allowedOrigins: ['http://localhost:3000'] };
    refused(guard, 'evil.example', 'http://evil.example', 'host-forbidden');
    refused(guard, 'localhost:3000', 'http://evil.example', 'origin-forbidden');
    passes(guard, 'localhost:3000', 'http://localhost:3000');
    passes(guard, 'localhost:3000', null);
  });

  it('does not echo long attacker input in the message', () => {
    const long = 'x'.repeat(10_000);
    const cases: Array<[HostGuardOptions, string | null, string | null]> = [
      [{ allowedHosts: ['a'] }, long, null],
      [{ allowedOrigins: ['a'] }, null, long],
    ];
    for (const [guard, host, origin] of cases) {
      try {
        checkHostAndOrigin(guard, host, origin);
        assert.fail('expected a throw');
      } catch (err) {
        assert.ok(isContinuityError(err), `expected a ContinuityError, got ${String(err)}`);
        // The message says what to do (a few lines of advice), never the 10,000 characters it was sent.
        assert.ok(!err.message.includes('x'.repeat(100)), 'the attacker input is not echoed');
        assert.ok(err.message.length < 600, `message length ${err.message.length}`);
      }
    }
  });
});

describe('host-guard: loopbackGuard', () => {
  const guard = loopbackGuard(3000);

  it('accepts the loopback names on the port, with http and https origins', () => {
    for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']) {
      passes(guard, host, null);
      passes(guard, host, `http://${host}`);
      passes(guard, host, `https://${host}`);
    }
  });

  it('lists exactly the loopback hosts and origins for the port', () => {
    assert.deepEqual(new Set(guard.allowedHosts), new Set(['localhost:3000', '127.0.0.1:3000', '[::1]:3000']));
    assert.deepEqual(
      new Set(guard.allowedOrigins),
      new Set(['localhost:3000', '127.0.0.1:3000', '[::1]:3000'].flatMap((h) => [`http://${h}`, `https://${h}`])),
    );
  });

  it('refuses DNS rebinding: a foreign Host name or Origin', () => {
    refused(guard, 'evil.example:3000', 'http://evil.example:3000', 'host-forbidden');
    refused(guard, 'evil.example:3000', null, 'host-forbidden');
    refused(guard, 'localhost:3000', 'http://evil.example:3000', 'origin-forbidden');
    refused(guard, 'localhost:3000', 'http://localhost:3000.evil.example', 'origin-forbidden');
    refused(guard, 'localhost:3000', 'null', 'origin-forbidden');
  });

  it('refuses the wrong port and a missing port', () => {
    refused(guard, 'localhost:3001', null, 'host-forbidden');
    refused(guard, 'localhost', null, 'host-forbidden');
    refused(guard, '127.0.0.1', null, 'host-forbidden');
    refused(guard, 'localhost:3000', 'http://localhost:3001', 'origin-forbidden');
    refused(guard, 'localhost:3000', 'http://localhost', 'origin-forbidden');
  });

  it('refuses a missing Host', () => {
    refused(guard, null, null, 'host-forbidden');
  });

  it('is specific to its port', () => {
    passes(loopbackGuard(8080), 'localhost:8080', 'http://127.0.0.1:8080');
    refused(loopbackGuard(8080), 'localhost:3000', null, 'host-forbidden');
  });

  it('accepts a Host naming the loopback address it was bound to', () => {
    passes(loopbackGuard(3000, '127.0.0.2'), '127.0.0.2:3000', 'http://127.0.0.2:3000');
    passes(loopbackGuard(3000, '::1'), '[::1]:3000', null);
    refused(loopbackGuard(3000), '127.0.0.2:3000', null, 'host-forbidden');
  });
});

describe('host-guard: isLoopbackHost', () => {
  it('recognises loopback bind addresses', () => {
    for (const h of ['localhost', '127.0.0.1', '127.0.0.2', '127.255.255.255', '127.1.2.3', '::1', '[::1]']) {
      assert.equal(isLoopbackHost(h), true, h);
    }
  });

  it('rejects everything else', () => {
    for (const h of [
      '',
      '0.0.0.0',
      '::',
      '[::]',
      '192.168.1.1',
      '10.0.0.1',
      '128.0.0.1',
      '1.127.0.0.1',
      'example.com',
      'localhost.evil.example',
      'evil-localhost',
      '127.0.0.1.evil.example',
      '127.0.0.1:3000',
      'localhost:3000',
      '[::1]:3000',
      ' localhost',
      '127.0.0',
      '127.0.0.1.',
    ]) {
      assert.equal(isLoopbackHost(h), false, h);
    }
  });

  it('recognises other spellings of loopback', () => {
    for (const h of ['LOCALHOST', 'LocalHost', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1', '[0:0:0:0:0:0:0:1]', 'app.localhost']) {
      assert.equal(isLoopbackHost(h), true, h);
    }
  });
});
