/** A real endpoint on a real socket, with the project's example server. */
import { createEndpoint, type Endpoint, type EndpointOptions } from '../../src/server/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { createExampleServer } from '../../src/example/index.js';

export interface Fixture {
  url: URL;
  endpoint: Endpoint;
  listener: Listener;
  errors: Error[];
  close(): Promise<void>;
}

export async function startFixture(options: Partial<EndpointOptions> = {}): Promise<Fixture> {
  const errors: Error[] = [];
  const endpoint = createEndpoint({
    server: () => createExampleServer(),
    onError: (e) => errors.push(e),
    ...options,
  });
  const listener = await listen(endpoint, { port: 0 });
  return { url: listener.url, endpoint, listener, errors, close: () => listener.close() };
}
