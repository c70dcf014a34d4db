import { ApiProperty } from '@nestjs/swagger';
import { ERROR_STATUS } from '../common/error-codes';

/** The error body every failure answers with (API.md, Errors). */
export class ErrorBodyDoc {
  @ApiProperty({ example: 409 }) statusCode: number;
  @ApiProperty({ enum: Object.keys(ERROR_STATUS), example: 'FULL' }) code: string;
  @ApiProperty({ example: 'no seat is left' }) message: string;
  @ApiProperty({
    required: false,
    type: [Number],
    description: 'TIME_CONFLICT and SAME_COURSE: the lectures you hold that are in the way',
  })
  conflictsWith?: number[];
}
