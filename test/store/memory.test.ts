import { memoryStore } from '../../src/store/memory.js';
import { storeContract } from './contract.js';

storeContract('memory', (o) => memoryStore(o));
