export {
  DEFAULT_RETENTION,
  type AppendNotice,
  type ClusterBus,
  type EventLog,
  type Lease,
  type LogEvent,
  type Ownership,
  type ResolvedRetention,
  type RetentionOptions,
  type SessionRecord,
  type SessionStore,
  type Store,
  type StreamHead,
  type StreamInfo,
  type Unsubscribe,
} from './types.js';
export { memoryStore, type MemoryStoreOptions } from './memory/index.js';
