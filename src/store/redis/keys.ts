/**
 * Key and channel names of the Redis store. Every key of a session carries the hash tag
 * `{<sessionId>}`, so a session lives in one hash slot and its scripts run unchanged on
 * Redis Cluster. The layout is described in `./scripts.ts` and docs/stores.md.
 */
export class Keys {
  constructor(readonly prefix: string) {}

  /** `P{sid}`: the part every key of the session starts with. */
  tag(session: string): string {
    return `${this.prefix}{${session}}`;
  }
  record(session: string): string {
    return `${this.tag(session)}:rec`;
  }
  lease(session: string): string {
    return `${this.tag(session)}:lease`;
  }
  streams(session: string): string {
    return `${this.tag(session)}:streams`;
  }
  head(session: string, stream: string): string {
    return `${this.tag(session)}:h:${stream}`;
  }
  events(session: string, stream: string): string {
    return `${this.tag(session)}:e:${stream}`;
  }
  /** Channel of the session's append notices. */
  tail(session: string): string {
    return `${this.tag(session)}:tail`;
  }
  /** Channel of a replica's inbox. */
  inbox(owner: string): string {
    return `${this.prefix}{${owner}}:inbox`;
  }
  /** Channel of the modern leg's change events (`ServerEventBus`) named `name`. */
  changes(name: string): string {
    return `${this.prefix}{changes:${name}}:events`;
  }
  /** The index of sessions by last activity: the one key outside a session's slot. */
  idle(): string {
    return `${this.prefix}idle`;
  }
}
