/** A path id is a positive integer in plain digits; anything else names no resource. */
export function parsePathId(raw: string | undefined): number | null {
  if (!raw || !/^[0-9]{1,15}$/.test(raw)) return null;
  const id = Number(raw);
  return id >= 1 ? id : null;
}

/** The raw query as pairs, so that repeated and bracketed keys can be told apart. */
export function queryPairs(querystring: string): Array<[string, string]> {
  return [...new URLSearchParams(querystring)];
}
