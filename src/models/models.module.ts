import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module';
import { ModelsController } from './models.controller';

/** `GET /v1/models`: the default model and the configured providers, as `ModelProviders` lists them. */
@Module({
  imports: [LlmModule],
  controllers: [ModelsController],
})
export class ModelsModule {}
