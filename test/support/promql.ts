/** Reading PromQL for the metric names it selects: the alert rules' and the dashboard's tests check them against the service. */

const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'rate',
  'increase',
  'irate',
  'histogram_quantile',
  'absent',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);

/** The expression with its label matchers `{...}` and ranges `[...]` blanked out (strings already emptied). */
function withoutBrackets(expr: string): string {
  let out = '';
  let closing: string | null = null;
  for (const char of expr) {
    if (closing) {
      if (char === closing) closing = null;
    } else if (char === '{' || char === '[') {
      closing = char === '{' ? '}' : ']';
      out += ' ';
    } else out += char;
  }
  return out;
}

/** The metric names an expression selects: identifiers left once strings, label matchers, groupings and ranges are gone. */
export function metricNamesIn(expr: string): string[] {
  const bare = withoutBrackets(expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')).replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const [token] of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) if (!PROMQL_WORDS.has(token) && !/^\d/.test(token)) names.add(token);
  return [...names];
}
