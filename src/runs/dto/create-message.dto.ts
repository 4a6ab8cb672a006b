import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsNotEmpty, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';
import { ResponseFormatDto } from '../../sessions/dto/response-format.dto';

export class CreateMessageDto {
  @ApiProperty({ example: 'And what does it say about testing?' })
  @IsString()
  @IsNotEmpty()
  content!: string;

  @ApiPropertyOptional({
    type: ResponseFormatDto,
    description:
      "This run's final answer as JSON valid against a schema, over the session's (Structured output)",
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => ResponseFormatDto)
  @IsObject()
  responseFormat?: ResponseFormatDto;
}
