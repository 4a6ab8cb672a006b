import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

/** PATCH /v1/sessions/:id: what a session's owner may change after its creation. */
export class UpdateSessionDto {
  @ApiProperty({ minLength: 1, maxLength: 200, description: 'The new title' })
  @IsString()
  @Length(1, 200)
  title!: string;
}
