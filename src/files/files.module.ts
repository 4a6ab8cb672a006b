import { Module } from '@nestjs/common';
import { StoreModule } from '../store/store.module';
import { FilesController } from './files.controller';
import { Files } from './files.service';

/** `/v1/files`: uploads, stored in PostgreSQL once per content ("Attachments"). */
@Module({
  imports: [StoreModule],
  controllers: [FilesController],
  providers: [Files],
  exports: [Files],
})
export class FilesModule {}
