import { Module, type DynamicModule } from '@nestjs/common';
import { ChatModule } from './chat/chat.module';
import { DrainingModule } from './common/draining';
import { FrontendsModule } from './frontends/frontends.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { HealthModule } from './health/health.module';
import { McpModule } from './mcp/mcp.module';
import { MetricsModule } from './metrics/metrics.module';
import { LoggingModule } from './observability/logging.module';
import { TracingModule } from './observability/tracing.module';
import { PersistenceModule } from './persistence/persistence.module';
import { PlaygroundModule } from './playground/playground.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DrainingModule,
        LoggingModule,
        TracingModule,
        PersistenceModule.forRoot(databaseUrl),
        MetricsModule,
        HealthModule,
        ChatModule,
        McpModule,
        FrontendsModule,
        PlaygroundModule,
      ],
    };
  }
}
