import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/persistence/data-source-options';
import { runMigrationsLocked } from '../../src/persistence/migrate';
import { MIGRATIONS } from '../../src/persistence/migrations';
import { createTestDatabase } from '../support/database';

describe('migrations', () => {
  it('bring an empty database exactly to the entities: generating a migration now yields nothing', async () => {
    const dataSource = await new DataSource(dataSourceOptions(await createTestDatabase(), 2)).initialize();
    try {
      await runMigrationsLocked(dataSource);
      const drift = await dataSource.driver.createSchemaBuilder().log();
      expect(drift.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('are safe when two replicas migrate the same database at once', async () => {
    const url = await createTestDatabase();
    const replicas = await Promise.all(
      [1, 2].map(() => new DataSource(dataSourceOptions(url, 2)).initialize()),
    );
    try {
      await Promise.all(replicas.map((ds) => runMigrationsLocked(ds)));
      const rows: { name: string }[] = await replicas[0].query('SELECT name FROM migrations');
      // Each migration ran exactly once.
      expect(rows.map((r) => r.name).sort()).toEqual(MIGRATIONS.map((m) => m.name).sort());
    } finally {
      await Promise.all(replicas.map((ds) => ds.destroy()));
    }
  });
});
