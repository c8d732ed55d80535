export { buildContainer } from './container.js';
export { startServer, closeDependencies, type RunningServer } from './server.js';
export { createApp } from './app.js';
export { Tokens } from './tokens.js';
export { buildOpenApiDocument, type OpenApiDocument } from './ops/openapi/openapi-document.js';
export { servedOpenApiDocument } from './ops/ops-routers.js';
