export * from './config/app-config.js';
export * from './sniff/file-type.sniffer.js';
