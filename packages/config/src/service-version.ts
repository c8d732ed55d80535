/**
 * The release of this service (semver), in one place: the OpenAPI document's `info.version`, `GET /health/live`
 * and the API's start line report it. CHANGELOG.md's newest release heading must say the same (a test checks), and a
 * release bumps it here (docs/operate/upgrading.md, "Versions").
 */
export const SERVICE_VERSION = '1.1.0';
