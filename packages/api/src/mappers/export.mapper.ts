import { toExportObject, type Export } from '@logi/domain';

/** An export as the client reads it: the same object the `export.*` events carry. */
export function toExportDto(item: Export) {
  return toExportObject(item);
}
