export * from './app-config.js';
export * from './database-tls.js';
export * from './duration-buckets.js';
export * from './redis-endpoint.js';
export * from './retry-schedule.js';
export * from './service-version.js';
export * from './worker-queues.js';
