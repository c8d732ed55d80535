export * from './tokens.js';
export * from './container.js';
export * from './start-worker.js';
