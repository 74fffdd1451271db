/** `allowHosts` (behind `serve --allowed-hosts`): extra names, with or without a port. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowHosts, checkHostAndOrigin, loopbackGuard } from '../../src/server/host-guard.js';
import { isContinuityError } from '../../src/protocol/errors.js';

const refused = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    assert.ok(isContinuityError(error));
    return error.code;
  }
};

test('a name:port entry matches exactly; a bare name matches any port; the loopback defaults stay', () => {
  const guard = allowHosts(loopbackGuard(3000), ['devbox.internal:8080', 'tunnel.example']);
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'localhost:3000', null)),
    undefined,
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'devbox.internal:8080', null)),
    undefined,
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'DEVBOX.internal:8080', 'http://devbox.internal:8080')),
    undefined,
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'devbox.internal:8081', null)),
    'host-forbidden',
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'tunnel.example', 'https://tunnel.example')),
    undefined,
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'tunnel.example:443', 'https://tunnel.example:443')),
    undefined,
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'tunnel.example.evil:443', null)),
    'host-forbidden',
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'localhost:3001', null)),
    'host-forbidden',
    'loopback entries keep their port',
  );
  assert.equal(
    refused(() => checkHostAndOrigin(guard, 'tunnel.example', 'http://evil.example')),
    'origin-forbidden',
  );
  assert.deepEqual(allowHosts(loopbackGuard(3000), []), loopbackGuard(3000));
});

test('the 403 message names the fix', () => {
  try {
    checkHostAndOrigin(loopbackGuard(3000), 'proxy.internal:9000', null);
    assert.fail('refused');
  } catch (error) {
    assert.match((error as Error).message, /--allowed-hosts/);
    assert.match((error as Error).message, /allowedHosts/);
    // Not "allow what you see": behind a proxy that is the upstream name, which admits every Host.
    assert.match((error as Error).message, /forward the client's Host/);
    assert.match((error as Error).message, /proxy_set_header Host \$http_host/);
    assert.match((error as Error).message, /not the proxy's upstream name/);
  }
});
