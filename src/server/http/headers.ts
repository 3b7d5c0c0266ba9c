/** Request headers in any of the shapes frameworks hand out. */
export type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined> | undefined;

/** Case-insensitive lookup in a Fetch `Headers`, Node's `IncomingHttpHeaders` or a plain object. */
export function getHeader(headers: HeadersLike, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const value = (headers as { get(name: string): string | null }).get(name);
    return value === null ? undefined : value;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const lower = name.toLowerCase();
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === lower) {
      const value = record[key];
      return Array.isArray(value) ? value[0] : value;
    }
  }
  return undefined;
}
