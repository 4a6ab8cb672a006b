import { Module } from '@nestjs/common';
import { ToolsModule } from '../tools/tools.module';
import { AgentsController } from './agents.controller';
import { Agents } from './agents.service';

/** `GET /v1/agents`: AGENTS_CONFIG's agents with their defaults filled in. */
@Module({
  imports: [ToolsModule],
  controllers: [AgentsController],
  providers: [Agents],
})
export class AgentsModule {}
