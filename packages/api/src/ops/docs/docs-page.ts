/**
 * The page that hosts Swagger UI. Everything it loads comes from this
 * server; the Content-Security-Policy sent with it makes the browser refuse
 * anything else, so "no request leaves the server" holds by construction.
 */
export const DOCS_PAGE_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Logistics API reference</title>
    <link rel="stylesheet" href="/v1/docs/assets/swagger-ui.css">
    <link rel="icon" type="image/png" href="/v1/docs/assets/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="/v1/docs/assets/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <noscript>This page needs JavaScript. The document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
    <div id="swagger-ui"></div>
    <script src="/v1/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/v1/docs/assets/docs-initializer.js"></script>
  </body>
</html>
`;

/** Same-origin only; Swagger UI styles some elements inline and shows SVG icons as data: URLs. */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
