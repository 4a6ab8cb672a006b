import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString } from 'class-validator';

export class CreateMessageDto {
  @ApiProperty({ example: 'And what does it say about testing?' })
  @IsString()
  @IsNotEmpty()
  content!: string;
}
