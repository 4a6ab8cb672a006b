import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { LlmModule } from '../llm/llm.module';
import { StoreModule } from '../store/store.module';
import { ToolsModule } from '../tools/tools.module';
import { EndUserScope } from './end-user-scope.guard';
import { SessionsController } from './sessions.controller';
import { Sessions } from './sessions.service';

/** Sessions: their options, their messages and the files their tool calls changed. */
@Module({
  imports: [StoreModule, ToolsModule, LlmModule],
  controllers: [SessionsController],
  providers: [Sessions, { provide: APP_GUARD, useClass: EndUserScope }],
  exports: [Sessions],
})
export class SessionsModule {}
