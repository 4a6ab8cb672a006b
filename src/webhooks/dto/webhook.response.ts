import { ApiProperty } from '@nestjs/swagger';
import { WEBHOOK_EVENT_CHOICES } from './create-webhook.dto';

export class WebhookResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  url!: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_CHOICES] } })
  events!: string[];

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: Date;
}

export class CreatedWebhookResponse extends WebhookResponse {
  @ApiProperty({ description: 'The signing secret: shown only in this answer' })
  secret!: string;
}

export class WebhookListResponse {
  @ApiProperty({ type: [WebhookResponse] })
  data!: WebhookResponse[];
}

export class WebhookDeliveryResponse {
  @ApiProperty({ format: 'uuid' })
  webhookId!: string;

  @ApiProperty({ description: 'The event type, e.g. run.completed' })
  type!: string;

  @ApiProperty({ description: "The attempt's number for its event: 1, 2, 3 …" })
  attempt!: number;

  @ApiProperty({ type: Number, nullable: true, description: "The answer's HTTP status; null when none came" })
  status!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why the attempt failed; null when it did not' })
  error!: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  at!: Date;
}

export class WebhookDeliveryListResponse {
  @ApiProperty({ type: [WebhookDeliveryResponse], description: 'Newest first, at most 100' })
  data!: WebhookDeliveryResponse[];
}
