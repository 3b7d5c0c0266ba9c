// Stand-ins for your own code, so that the recipes run as they are: your database and your
// session lookup. Replace them with yours.
import { appendFileSync } from 'node:fs';
import type { Logistics } from 'channel-sdk/server';

export const saved: Logistics[] = [];

export async function saveLogistics(logistics: Logistics): Promise<void> {
  saved.push(logistics);
  // The Next.js recipes run in a server process of their own; the tests read this file.
  if (process.env.EXAMPLES_SAVED_FILE) appendFileSync(process.env.EXAMPLES_SAVED_FILE, JSON.stringify(logistics) + '\n');
}

const sessions: Record<string, string> = { 'demo-session': 'user-1' };

/** Your user id for a session id, or undefined when nobody is signed in with it. */
export function userIdFromSession(id: string | null | undefined): string | undefined {
  return id ? sessions[id] : undefined;
}

/** Your user id for the request's session cookie (a web page's), or undefined. */
export function userIdFromCookie(cookie: string | null | undefined): string | undefined {
  return userIdFromSession(/(?:^|;\s*)session=([^;]*)/.exec(cookie ?? '')?.[1]);
}
