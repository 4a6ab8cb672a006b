import { Module } from '@nestjs/common';
import { StoreModule } from '../store/store.module';
import { FilesController } from './files.controller';
import { Files } from './files.service';
import { Prompts } from './prompts.service';

/** `/v1/files`: uploads, stored in PostgreSQL once per content ("Attachments"). */
@Module({
  imports: [StoreModule],
  controllers: [FilesController],
  providers: [Files, Prompts],
  exports: [Files, Prompts],
})
export class FilesModule {}
