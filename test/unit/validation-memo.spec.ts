import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Min, ValidateNested } from 'class-validator';
import { rememberBodyText } from '../../src/common/body-text';
import { AppError } from '../../src/common/error-codes';
import { StrictValidationPipe } from '../../src/common/validation.pipe';
import { IsIsoDateTime, IsLectureIds, IsOmittable } from '../../src/common/validators';
import { EnrollBodyDto } from '../../src/enroll/enroll.controller';

class Inner {
  @IsInt() n: number;
}

class Nested {
  @IsOptional() @ValidateNested() @Type(() => Inner) inner?: Inner;
}

class WithDefault {
  @IsOmittable() @IsInt() @Min(0) limit: number = 20;
}

class When {
  @IsIsoDateTime() opensAt: Date;
}

class OtherIds {
  @IsOmittable() @IsLectureIds(1) sections?: number[];
}

/** A body as the service's JSON parser hands it over: parsed, its text remembered. */
function body(text: string): object {
  const value = JSON.parse(text) as object;
  rememberBodyText(value, text);
  return value;
}

const asBody = (metatype: new () => unknown) => ({ type: 'body' as const, metatype });

describe('StrictValidationPipe: small bodies judged once per DTO and text', () => {
  afterEach(() => jest.restoreAllMocks());

  it('answers a remembered body with a fresh DTO of its fields, every time', async () => {
    const pipe = new StrictValidationPipe();
    const full = jest.spyOn(ValidationPipe.prototype, 'transform');
    const first = await pipe.transform(body('{"sections":[7]}'), asBody(EnrollBodyDto));
    const second = await pipe.transform(body('{"sections":[7]}'), asBody(EnrollBodyDto));
    for (const dto of [first, second]) {
      expect(dto).toBeInstanceOf(EnrollBodyDto);
      expect(dto).toEqual({ sections: [7] });
    }
    expect(second).not.toBe(first);
    expect(full).toHaveBeenCalledTimes(1); // the second was answered from the memo
  });

  it('refuses an invalid body every time, with its message', async () => {
    const pipe = new StrictValidationPipe();
    for (let i = 0; i < 3; i++) {
      const err = await pipe.transform(body('{"sections":[0]}'), asBody(EnrollBodyDto)).catch((e: unknown) => e); // prettier-ignore
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('VALIDATION_FAILED');
      expect((err as AppError).message).toMatch(/sections/);
    }
  });

  it('judges a text valid for one DTO again for another', async () => {
    const pipe = new StrictValidationPipe();
    await pipe.transform(body('{"sections":[1,2]}'), asBody(EnrollBodyDto));
    const err = await pipe.transform(body('{"sections":[1,2]}'), asBody(OtherIds)).catch((e: unknown) => e); // prettier-ignore
    expect((err as AppError).code).toBe('VALIDATION_FAILED');
  });

  it('keeps transforming bodies a DTO changes (nested types, defaults, dates)', async () => {
    const pipe = new StrictValidationPipe();
    const full = jest.spyOn(ValidationPipe.prototype, 'transform');
    for (let i = 0; i < 2; i++) {
      const nested = (await pipe.transform(body('{"inner":{"n":1}}'), asBody(Nested))) as Nested;
      expect(nested.inner).toBeInstanceOf(Inner);
      const empty = (await pipe.transform(body('{}'), asBody(WithDefault))) as WithDefault;
      expect(empty).toEqual({ limit: 20 });
      expect(empty).toBeInstanceOf(WithDefault);
      // A date-time the DTO turns into a Date, though its JSON reads the same.
      const when = (await pipe.transform(body('{"opensAt":"2027-01-11T09:00:00.000Z"}'), asBody(When))) as When; // prettier-ignore
      expect(when.opensAt).toBeInstanceOf(Date);
    }
    expect(full).toHaveBeenCalledTimes(6); // never from the memo
  });

  it('treats no body as an empty one, judged once', async () => {
    const pipe = new StrictValidationPipe();
    for (let i = 0; i < 2; i++) {
      const dto = await pipe.transform(undefined, asBody(EnrollBodyDto));
      expect(dto).toBeInstanceOf(EnrollBodyDto);
      expect(dto).toEqual({});
    }
  });
});
