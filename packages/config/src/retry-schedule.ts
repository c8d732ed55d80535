/** Parses WEBHOOK_RETRY_SCHEDULE (`5,300,1800`): whole seconds, at least one, each >= 1. */
export function parseRetrySchedule(value: string): number[] | null {
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => !/^\d+$/.test(part) || Number(part) < 1)) return null;
  return parts.map(Number);
}
