import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsNotEmpty, IsOptional, IsString } from 'class-validator';

export class ToolResultDto {
  @ApiProperty({ description: 'The result as the model will read it' })
  @IsString()
  @IsNotEmpty()
  content!: string;

  @ApiPropertyOptional({ description: 'Whether the content reports a failure (default false)' })
  @IsOptional()
  @IsBoolean()
  isError?: boolean;
}
