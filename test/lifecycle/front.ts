/**
 * The front of the cluster: the test's round-robin proxy, or a real nginx in one of two
 * configurations: docs/deploy.md's recipe as written, and one with `max_fails=0`,
 * `keepalive 16` and no upstream `keepalive_timeout` (reused upstream connections that a
 * replacement replica on the same port never saw).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { recipe, startNginx } from '../helpers/nginx.js';
import { startRoundRobin } from '../helpers/round-robin.js';
import type { Front } from './schedule.js';

const DOCS = readFileSync(fileURLToPath(new URL('../../docs/deploy.md', import.meta.url)), 'utf8');

export interface FrontProcess {
  readonly port: number;
  /** Points the front at these replicas (a reload for nginx). */
  setUpstreams(urls: readonly URL[]): Promise<void>;
  close(): Promise<void>;
}

/** The nginx `http` body for `kind` with `urls` as its upstream servers. */
export function nginxConf(kind: 'nginx-docs' | 'nginx-keepalive', urls: readonly URL[]): string {
  const conf = recipe(DOCS, '## nginx', 'nginx');
  const template = conf.match(/^\s*server 10\.0\.0\.11:3000[^\n]*\n/m)?.[0];
  if (template === undefined) throw new Error('the nginx recipe in docs/deploy.md has no `server 10.0.0.11:3000` line');
  const servers = urls.map((u) => template.replace('10.0.0.11:3000', u.host)).join('');
  let out = conf.replace(/(^\s*server 10\.0\.0\.1\d:3000[^\n]*\n)+/m, servers);
  if (kind === 'nginx-keepalive') {
    out = out
      .replace(/max_fails=\d+ fail_timeout=\w+/g, 'max_fails=0')
      .replace(/keepalive \d+;/, 'keepalive 16;')
      .replace(/^\s*keepalive_timeout [^\n]*\n/m, '');
  }
  return out;
}

export async function startFront(kind: Front, urls: readonly URL[], port: number): Promise<FrontProcess> {
  if (kind === 'round-robin') {
    const rr = await startRoundRobin(urls);
    return {
      port: Number(rr.url.port),
      setUpstreams: (list) => Promise.resolve(rr.setUpstreams(list)),
      close: () => rr.close(),
    };
  }
  const nginx = await startNginx(nginxConf(kind, urls), port);
  return {
    port: nginx.port,
    setUpstreams: (list) => nginx.reload(nginxConf(kind, list)),
    close: () => nginx.stop(),
  };
}
