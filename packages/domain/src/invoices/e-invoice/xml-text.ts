/**
 * What XML 1.0 forbids in a document (its `Char` production): C0 controls but tab, LF and CR, lone surrogates,
 * U+FFFE and U+FFFF. In `u` mode a surrogate pair is one code point and is kept.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what this removes
const XML_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/gu;

/** Text as XML may carry it: every character XML 1.0 forbids dropped, never written (issue 35); the rest unchanged. */
export function xmlSafeText(value: string): string {
  return value.replace(XML_FORBIDDEN, '');
}

/** A copy of `value` with every string in it, at any depth, made XML-safe: the data a writer turns into XML. */
export function xmlSafeData<T>(value: T): T {
  if (typeof value === 'string') return xmlSafeText(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => xmlSafeData(item)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, xmlSafeData(item)])) as T;
  }
  return value;
}
