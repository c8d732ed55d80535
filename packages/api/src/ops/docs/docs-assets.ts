import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface DocsAsset {
  contentType: string;
  body: Buffer | string;
}

/** Only these files of swagger-ui-dist are served: an allow-list, never a path from the URL. */
const PACKAGE_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Swagger UI's settings. A file rather than an inline script, so the page's
 * Content-Security-Policy can forbid inline scripts. `validatorUrl: null`
 * keeps the page from sending the document to validator.swagger.io.
 */
const INITIALIZER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: true,
    displayRequestDuration: true,
    filter: false,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    tryItOutEnabled: false,
    supportedSubmitMethods: ['get', 'post'],
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  });
});
`;

/** The renderer's files, read from the installed package once and kept in memory. */
export class DocsAssets {
  private readonly directory = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  private readonly cache = new Map<string, Promise<DocsAsset>>();

  get(name: string): Promise<DocsAsset> | null {
    if (name === 'docs-initializer.js') return Promise.resolve({ contentType: 'text/javascript; charset=utf-8', body: INITIALIZER });
    const contentType = PACKAGE_FILES[name];
    if (!contentType) return null;
    let asset = this.cache.get(name);
    if (!asset) {
      asset = readFile(path.join(this.directory, name)).then((body) => ({ contentType, body }));
      // A failed read is not cached: the next request tries again.
      asset.catch(() => this.cache.delete(name));
      this.cache.set(name, asset);
    }
    return asset;
  }
}
