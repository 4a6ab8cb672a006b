import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/persistence/data-source-options';
import { runMigrationsLocked } from '../../src/persistence/migrate';
import { UsageStore } from '../../src/store/usage-store.service';
import { createTestDatabase } from '../support/database';

// GET /v1/usage over a year of model calls of many keys reads one key's period through its index.
describe('the usage report over a year of calls', () => {
  let db: DataSource;
  let store: UsageStore;

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions(await createTestDatabase(), 2)).initialize();
    await runMigrationsLocked(db);
    store = new UsageStore(db);
    // 200,000 calls of 50 keys, spread over the last 365 days.
    await db.query(
      `INSERT INTO model_calls (id, run_id, session_id, owner, iteration, provider, model, prompt_tokens,
                                completion_tokens, cost_usd, created_at)
       SELECT gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'key-' || (i % 50), 1, 'openai',
              'openai/m', 100, 10, 0.001, now() - (i % 365) * interval '1 day' - (i % 86400) * interval '1 second'
         FROM generate_series(1, 200000) AS i`,
    );
    await db.query('ANALYZE model_calls');
  });
  afterAll(() => db?.destroy());

  it("plans one key's month as a range scan of (owner, created_at), never a scan of the table", async () => {
    const to = new Date();
    const from = new Date(to.getTime() - 30 * 24 * 3600 * 1000);
    const { sql, params } = store.usageSql({ owner: 'key-7', endUser: null, from, to, groupBy: 'day' });
    const plan: { 'QUERY PLAN': unknown }[] = await db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
    const text = JSON.stringify(plan[0]['QUERY PLAN']);
    expect(text).toContain('ix_model_calls_owner_created');
    expect(text).not.toContain('"Seq Scan"');

    const rows = await store.usage({ owner: 'key-7', endUser: null, from, to, groupBy: 'day' });
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.every((r) => r.promptTokens === r.runs * 100)).toBe(true);
  });
});
