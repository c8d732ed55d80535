import { writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { loadConfig } from '@logi/config';
import { buildOpenApiDocument } from '@logi/api';

/** Where the generated types live (checked in; a test compares them with a fresh generation). */
export const GENERATED_TYPES_PATH = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));

const BLOB = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'));

/**
 * The SDK's types, from the document the server builds with its default
 * configuration (the deployment facts only change descriptions). Built in
 * this process: no server and no network.
 */
export async function generateTypes(): Promise<string> {
  const document = buildOpenApiDocument(loadConfig({}));
  const ast = await openapiTS(document as unknown as OpenAPI3, {
    silent: true,
    // A binary field (an upload part, a PDF) is a Blob to a caller, not a string.
    transform: (schema) => (schema.format === 'binary' ? BLOB : undefined),
  });
  return `${COMMENT_HEADER.replace('Do not make direct changes to the file.', 'Do not edit: run `pnpm client:generate`.')}${astToString(ast)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await writeFile(GENERATED_TYPES_PATH, await generateTypes());
  console.log(`wrote ${GENERATED_TYPES_PATH}`);
}
