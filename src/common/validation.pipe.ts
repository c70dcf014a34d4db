import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError } from './error-codes';

/** Flattens class-validator's tree into "admission.batchSize must not be less than 1". */
function describe(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix + e.property;
    const own = Object.values(e.constraints ?? {}).map((m) =>
      m.startsWith(e.property) ? path + m.slice(e.property.length) : `${path}: ${m}`,
    );
    return [...own, ...describe(e.children ?? [], `${path}.`)];
  });
}

/**
 * Strict validation for every body, query and param DTO: unknown fields are rejected, values
 * are never coerced from one JSON type to another, and the message names the field.
 */
@Injectable()
export class StrictValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors) =>
        new AppError('VALIDATION_FAILED', describe(errors).join('; ') || 'invalid input'),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // No body at all is an empty object: a route whose body is all optional takes none.
    if (metadata.type === 'body' && value === undefined) value = {};
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (metadata.type === 'body' && !isObject) {
      throw new AppError('VALIDATION_FAILED', 'body must be a JSON object');
    }
    return super.transform(value, metadata);
  }

  /** Route params stay strings here; their own pipes (ParseIdPipe) decide what is valid. */
  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }
}
