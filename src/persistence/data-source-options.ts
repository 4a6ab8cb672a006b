import type { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { PreparingClient } from './preparing-client';

/** One definition of the connection for the app, the migration generator and the tests. */
export function dataSourceOptions(url: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: false,
    synchronize: false,
    logging: false,
    poolSize,
    extra: { application_name: 'loopwright', Client: PreparingClient },
  };
}
