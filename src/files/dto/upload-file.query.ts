import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

export class UploadFileQuery {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 255,
    description: "The file's name for a raw body (default `file` and the type's extension)",
  })
  @IsOptional()
  @IsString()
  name?: string;
}
