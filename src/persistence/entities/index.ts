import { BackgroundCommandEntity } from './background-command.entity';
import { BudgetReservationEntity } from './budget-reservation.entity';
import { FileBlobEntity, FileBlobPartEntity } from './file-blob.entity';
import { FileEntity } from './file.entity';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { KeySpendEntity } from './key-spend.entity';
import { KeySpendDeltaEntity } from './key-spend-delta.entity';
import { ModelCallEntity } from './model-call.entity';
import { MessageEntity } from './message.entity';
import { RunEventEntity } from './run-event.entity';
import { RunEntity } from './run.entity';
import { ScheduleEntity, ScheduleRunEntity } from './schedule.entity';
import { RunStartEntity } from './run-start.entity';
import { SessionEntity } from './session.entity';
import { ToolCallEntity } from './tool-call.entity';
import { WebhookAttemptEntity } from './webhook-attempt.entity';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEntity } from './webhook.entity';

export const ENTITIES = [
  SessionEntity,
  MessageEntity,
  RunEntity,
  ToolCallEntity,
  RunEventEntity,
  RunStartEntity,
  IdempotencyKeyEntity,
  ModelCallEntity,
  KeySpendEntity,
  KeySpendDeltaEntity,
  BackgroundCommandEntity,
  WebhookEntity,
  WebhookDeliveryEntity,
  WebhookAttemptEntity,
  ScheduleEntity,
  ScheduleRunEntity,
  BudgetReservationEntity,
  FileBlobEntity,
  FileBlobPartEntity,
  FileEntity,
];
