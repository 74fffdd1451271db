export type * from './types.js';
export { DEFAULT_RETENTION } from './types.js';
export { memoryStore, type MemoryStoreOptions } from './memory/index.js';
