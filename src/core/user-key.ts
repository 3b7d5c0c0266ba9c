/** A user key as a non-empty string (a number id too), else undefined: nobody signed in. */
export function userKey(value: unknown): string | undefined {
  return (typeof value === 'string' && value) || (typeof value === 'number' && isFinite(value)) ? String(value) : undefined;
}
