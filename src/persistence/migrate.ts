import type { DataSource } from 'typeorm';

// Any constant shared by every replica: the first to take it migrates, the others wait and find nothing to do.
const MIGRATION_LOCK = 7_353_001;

/** Runs pending migrations under a PostgreSQL advisory lock, so replicas starting together are safe. */
export async function runMigrationsLocked(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await runner.release();
  }
}
