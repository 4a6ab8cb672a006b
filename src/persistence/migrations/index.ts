import { Initial1795350083586 } from './1795350083586-initial';
import { RunStarts1795410119189 } from './1795410119189-run-starts';
import { FrontendChatIds1795410348852 } from './1795410348852-frontend-chat-ids';
import { RunSupersededBy1795413323169 } from './1795413323169-run-superseded-by';
import { IdempotencyKeys1795417048424 } from './1795417048424-idempotency-keys';
import { LightEventLog1795417824579 } from './1795417824579-light-event-log';
import { OwnerActiveRuns1795417890573 } from './1795417890573-owner-active-runs';
import { RunResumes1795420000000 } from './1795420000000-run-resumes';
import { ModelProviders1795500000000 } from './1795500000000-model-providers';
import { TeamUsage1795779091472 } from './1795779091472-team-usage';
import { MessageContext1795779164919 } from './1795779164919-message-context';
import { SessionModelCalls1795800000000 } from './1795800000000-session-model-calls';
import { SessionCompactionClaims1795900000000 } from './1795900000000-session-compaction-claims';
import { CountedUsage1796179338219 } from './1796179338219-counted-usage';
import { BackgroundCommands1797000000000 } from './1797000000000-background-commands';
import { ChildSessions1797100000000 } from './1797100000000-child-sessions';
import { Files1797200000000 } from './1797200000000-files';
import { MessageParts1797200000001 } from './1797200000001-message-parts';
import { ResponseFormat1797300000000 } from './1797300000000-response-format';
import { BudgetReservations1797400000000 } from './1797400000000-budget-reservations';
import { QueuedRuns1797500000000 } from './1797500000000-queued-runs';
import { Schedules1797500000001 } from './1797500000001-schedules';
import { Webhooks1797600000000 } from './1797600000000-webhooks';
import { RunReplays1797700000000 } from './1797700000000-run-replays';
import { RunBudgets1797800000000 } from './1797800000000-run-budgets';
import { WebhookPruning1797820000000 } from './1797820000000-webhook-pruning';
import { ReservationAges1797830000000 } from './1797830000000-reservation-ages';
import { ReserveAhead1797840000000 } from './1797840000000-reserve-ahead';
import { ReservationBatches1797850000000 } from './1797850000000-reservation-batches';
import { SpendDeltas1797860000000 } from './1797860000000-spend-deltas';
import { SetReservations1797870000000 } from './1797870000000-set-reservations';

/** Every committed migration, oldest first. Never edit one that has landed; add a new one. */
export const MIGRATIONS = [
  Initial1795350083586,
  RunStarts1795410119189,
  FrontendChatIds1795410348852,
  RunSupersededBy1795413323169,
  IdempotencyKeys1795417048424,
  LightEventLog1795417824579,
  OwnerActiveRuns1795417890573,
  RunResumes1795420000000,
  ModelProviders1795500000000,
  TeamUsage1795779091472,
  MessageContext1795779164919,
  SessionModelCalls1795800000000,
  SessionCompactionClaims1795900000000,
  CountedUsage1796179338219,
  BackgroundCommands1797000000000,
  ChildSessions1797100000000,
  Files1797200000000,
  MessageParts1797200000001,
  ResponseFormat1797300000000,
  BudgetReservations1797400000000,
  QueuedRuns1797500000000,
  Schedules1797500000001,
  Webhooks1797600000000,
  RunReplays1797700000000,
  RunBudgets1797800000000,
  WebhookPruning1797820000000,
  ReservationAges1797830000000,
  ReserveAhead1797840000000,
  ReservationBatches1797850000000,
  SpendDeltas1797860000000,
  SetReservations1797870000000,
];
