import { Module, type DynamicModule } from '@nestjs/common';
import { AgentsModule } from './agents/agents.module';
import { CommandsModule } from './commands/commands.module';
import { DrainingModule } from './common/draining.service';
import { ForksModule } from './forks/forks.module';
import { FilesModule } from './files/files.module';
import { FrontendsModule } from './frontends/frontends.module';
import type { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { HealthModule } from './health/health.module';
import { McpModule } from './mcp/mcp.module';
import { ModelsModule } from './models/models.module';
import { MetricsModule } from './metrics/metrics.module';
import { LoggingModule } from './observability/logging.module';
import { TracingModule } from './observability/tracing.module';
import { PersistenceModule } from './persistence/persistence.module';
import { PlaygroundModule } from './playground/playground.module';
import { RunsModule } from './runs/runs.module';
import { SchedulesModule } from './schedules/schedules.module';
import { SessionsModule } from './sessions/sessions.module';
import { ToolsModule } from './tools/tools.module';
import { UsageModule } from './usage/usage.module';
import { WebhooksModule } from './webhooks/webhooks.module';

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
        RunsModule,
        SessionsModule,
        CommandsModule,
        FilesModule,
        ToolsModule,
        UsageModule,
        ModelsModule,
        AgentsModule,
        McpModule,
        FrontendsModule,
        ForksModule,
        PlaygroundModule,
        WebhooksModule,
        SchedulesModule,
      ],
    };
  }
}
