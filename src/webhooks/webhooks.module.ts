import { Module } from '@nestjs/common';
import { StoreModule } from '../store/store.module';
import { WebhookDeliverer } from './webhook-deliverer.service';
import { WebhooksController } from './webhooks.controller';
import { Webhooks } from './webhooks.service';

/** `/v1/webhooks` and the deliverer of their outbox (every process runs one). */
@Module({
  imports: [StoreModule],
  controllers: [WebhooksController],
  providers: [Webhooks, WebhookDeliverer],
})
export class WebhooksModule {}
