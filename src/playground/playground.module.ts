import { Module } from '@nestjs/common';
import { PlaygroundController } from './playground.controller';

/** The browser playground (web/, bundled into dist/web by `npm run build`). */
@Module({ controllers: [PlaygroundController] })
export class PlaygroundModule {}
