export * from './config/app-config.js';
