import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

/** The server of the test run (started by global-setup.js). */
export function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through jest (global-setup.js)');
  return url;
}

/** A fresh, empty database on the test server; the app migrates it when it starts. */
export async function createTestDatabase(): Promise<string> {
  const name = `t_${randomUUID().replace(/-/g, '')}`;
  const client = new Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** A plain client on a test database, for assertions on what was stored. */
export async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}
