import type { Client } from 'channel-sdk';
import { GraphQLClient } from 'graphql-request';

/** A GraphQL client (graphql-request) whose requests go through the token engine. */
export function createGraphQL(client: Client, endpoint: string) {
  return new GraphQLClient(endpoint, { fetch: client.fetch });
}
