import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { ENTITIES } from './entities';
import { runMigrationsLocked } from './migrate';
import { PgNotifications } from './pg-notifications.service';

/** The database: the TypeORM data source (migrated before anything uses it) and LISTEN/NOTIFY. */
@Global()
@Module({})
export class PersistenceModule {
  static forRoot(databaseUrl: string): DynamicModule {
    return {
      module: PersistenceModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSourceOptions(databaseUrl),
          dataSourceFactory: async (options?: DataSourceOptions) => {
            const dataSource = await new DataSource(options!).initialize();
            await runMigrationsLocked(dataSource);
            return dataSource;
          },
        }),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      providers: [{ provide: PgNotifications, useFactory: () => new PgNotifications(databaseUrl) }],
      exports: [TypeOrmModule, PgNotifications],
    };
  }
}
