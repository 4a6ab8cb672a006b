import type { DataSourceOptions } from 'typeorm';
import { DATABASE_POOL_SIZE } from '../common/tuning';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { PreparingClient } from './preparing-client';
import { PRIORITY_PG } from './priority-pool';

/** One definition of the connection for the app, the migration generator and the tests. */
export function dataSourceOptions(url: string, poolSize = DATABASE_POOL_SIZE): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    poolSize,
    driver: PRIORITY_PG,
    extra: { application_name: 'loopwright', Client: PreparingClient },
  };
}
