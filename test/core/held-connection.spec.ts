import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/persistence/data-source-options';
import { HeldConnection } from '../../src/store/held-connection';
import { createTestDatabase } from '../support/database';

/** The pg pool under TypeORM's driver, to see what it holds. */
function poolOf(db: DataSource): { totalCount: number; idleCount: number } {
  return (db.driver as unknown as { master: { totalCount: number; idleCount: number } }).master;
}

const backend = async (q: { query(sql: string): Promise<{ pid: number }[]> }) =>
  (await q.query('SELECT pg_backend_pid() AS pid'))[0].pid;

describe('HeldConnection on a real PostgreSQL: one connection kept while statements follow one another', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions(await createTestDatabase(), 2)).initialize();
  });
  afterAll(async () => {
    await db.destroy();
  });

  it('runs its statements on one connection the pool cannot hand out, until it is released', async () => {
    const held = new HeldConnection(db);
    const first = await backend(held);
    expect(await backend(held)).toBe(first);
    // Kept: the pool's other statements share what is left of it (one of two), never this one.
    const others = await Promise.all([backend(db.manager), backend(db.manager), backend(db.manager)]);
    expect(others).not.toContain(first);
    held.release();
    await new Promise((r) => setImmediate(r));
    expect(poolOf(db).idleCount).toBe(poolOf(db).totalCount);
  });

  it('takes a new connection after its own was dropped', async () => {
    const held = new HeldConnection(db);
    const first = await backend(held);
    await db.manager.query('SELECT pg_terminate_backend($1)', [first]);
    // The statement that meets the dropped connection fails (the caller retries); the next goes on.
    let next: number | undefined;
    for (let attempt = 0; attempt < 5 && next === undefined; attempt++) {
      next = await backend(held).catch(() => undefined);
      if (next === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(next).toBeDefined();
    expect(next).not.toBe(first);
    held.release();
  });
});
