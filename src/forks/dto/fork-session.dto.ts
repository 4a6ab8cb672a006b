import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';

/** POST /v1/sessions/:id/fork: where to cut the source's conversation. */
export class ForkSessionDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'The last message the fork keeps (default: the last stored one, before a step whose calls are not all answered); never inside a tool-call group',
  })
  @IsOptional()
  @IsUUID()
  atMessageId?: string;
}
