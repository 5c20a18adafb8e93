// class-validator's own entry point loads every decorator it has, validator.js whole and libphonenumber-js: about
// 20 MiB of RSS in a fresh Node process and 4.5 MiB in a service, paid by every service for decorators it never
// uses (docs/performance.md, "Eighth round"). Capstan takes the ones it uses from their own modules, here,
// and every schema and event class imports them from this file. The metadata they record lives in class-validator's
// one global storage, so a class decorated through its entry point (a test's) is validated the same way.
import { getFromContainer } from 'class-validator/cjs/container.js';
import { Validator } from 'class-validator/cjs/validation/Validator.js';
import type { ValidationError, ValidatorOptions } from 'class-validator';

export type { ValidationError, ValidationOptions, ValidatorOptions } from 'class-validator';
export { ArrayMaxSize } from 'class-validator/cjs/decorator/array/ArrayMaxSize.js';
export { ArrayMinSize } from 'class-validator/cjs/decorator/array/ArrayMinSize.js';
export { Equals } from 'class-validator/cjs/decorator/common/Equals.js';
export { IsDefined } from 'class-validator/cjs/decorator/common/IsDefined.js';
export { IsIn } from 'class-validator/cjs/decorator/common/IsIn.js';
export { IsNotEmpty } from 'class-validator/cjs/decorator/common/IsNotEmpty.js';
export { IsOptional } from 'class-validator/cjs/decorator/common/IsOptional.js';
export { ValidateBy, buildMessage } from 'class-validator/cjs/decorator/common/ValidateBy.js';
export { ValidateNested } from 'class-validator/cjs/decorator/common/ValidateNested.js';
export { Max } from 'class-validator/cjs/decorator/number/Max.js';
export { Min } from 'class-validator/cjs/decorator/number/Min.js';
export { IsRFC3339 } from 'class-validator/cjs/decorator/string/IsRFC3339.js';
export { Matches } from 'class-validator/cjs/decorator/string/Matches.js';
export { MaxLength } from 'class-validator/cjs/decorator/string/MaxLength.js';
export { MinLength } from 'class-validator/cjs/decorator/string/MinLength.js';
export { IsArray } from 'class-validator/cjs/decorator/typechecker/IsArray.js';
export { IsBoolean } from 'class-validator/cjs/decorator/typechecker/IsBoolean.js';
export { IsInt } from 'class-validator/cjs/decorator/typechecker/IsInt.js';
export { IsObject } from 'class-validator/cjs/decorator/typechecker/IsObject.js';
export { IsString } from 'class-validator/cjs/decorator/typechecker/IsString.js';
export { getMetadataStorage } from 'class-validator/cjs/metadata/MetadataStorage.js';

/** class-validator's `validateSync(object, options)`: the object's decorators, synchronous validators only. */
export function validateSync(object: object, options?: ValidatorOptions): ValidationError[] {
  return getFromContainer(Validator).validateSync(object, options);
}
