import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { EndUser } from '../auth/end-user';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { WebhookIdPipe } from '../http/uuid-or-404.pipe';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import {
  CreatedWebhookResponse,
  WebhookDeliveryListResponse,
  WebhookListResponse,
} from './dto/webhook.response';
import { webhookAttemptView, webhookView } from './webhook.presenter';
import { Webhooks } from './webhooks.service';

@ApiTags('webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: Webhooks) {}

  @Post()
  @ApiOperation({ summary: "Be told of the key's runs: a signed POST per event, retried for 24 hours" })
  @ApiCreatedResponse({ type: CreatedWebhookResponse })
  @ApiErrors(400)
  async create(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Body() body: CreateWebhookDto,
  ): Promise<CreatedWebhookResponse> {
    const created = await this.webhooks.create(owner, endUser, body);
    return { ...webhookView(created), secret: created.secret };
  }

  @Get()
  @ApiOperation({ summary: "The caller's webhooks (never their secrets)" })
  @ApiOkResponse({ type: WebhookListResponse })
  async list(@Owner() owner: string, @EndUser() endUser: string | null): Promise<WebhookListResponse> {
    return { data: (await this.webhooks.list(owner, endUser)).map(webhookView) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a webhook: nothing more is sent to it' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(404)
  async delete(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', WebhookIdPipe) id: string,
  ): Promise<void> {
    await this.webhooks.delete(owner, endUser, id);
  }

  @Get(':id/deliveries')
  @ApiOperation({ summary: "A webhook's delivery attempts, newest first" })
  @ApiOkResponse({ type: WebhookDeliveryListResponse })
  @ApiErrors(404)
  async deliveries(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', WebhookIdPipe) id: string,
  ): Promise<WebhookDeliveryListResponse> {
    return { data: (await this.webhooks.attempts(owner, endUser, id)).map(webhookAttemptView) };
  }
}
