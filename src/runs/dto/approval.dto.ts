import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsObject, IsOptional, IsString } from 'class-validator';

export class ApprovalDto {
  @ApiProperty()
  @IsBoolean()
  approve!: boolean;

  @ApiPropertyOptional({ description: 'Reaches the model with a rejection' })
  @IsOptional()
  @IsString()
  reason?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Approve an edited call: run with these arguments',
  })
  @IsOptional()
  @IsObject()
  arguments?: Record<string, unknown>;
}
