export * from './config/app-config.js';
export * from './sniff/file-type.sniffer.js';
export * from './fs/local-file.storage.js';
export * from './inline/inline-job.queue.js';
export * from './minio/minio-file.storage.js';
