// Types for the class-validator modules that schema/class-validator.ts imports one by one: the package ships its
// declarations under types/, not beside those modules, so each is declared here as the entry point's own export.
declare module 'class-validator/cjs/container.js' {
  export { getFromContainer } from 'class-validator';
}
declare module 'class-validator/cjs/validation/Validator.js' {
  export { Validator } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/array/ArrayMaxSize.js' {
  export { ArrayMaxSize } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/array/ArrayMinSize.js' {
  export { ArrayMinSize } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/common/Equals.js' {
  export { Equals } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/common/IsDefined.js' {
  export { IsDefined } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/common/IsIn.js' {
  export { IsIn } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/common/IsNotEmpty.js' {
  export { IsNotEmpty } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/common/IsOptional.js' {
  export { IsOptional } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/common/ValidateBy.js' {
  export { ValidateBy, buildMessage } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/common/ValidateNested.js' {
  export { ValidateNested } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/number/Max.js' {
  export { Max } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/number/Min.js' {
  export { Min } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/string/IsRFC3339.js' {
  export { IsRFC3339 } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/string/Matches.js' {
  export { Matches } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/string/MaxLength.js' {
  export { MaxLength } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/string/MinLength.js' {
  export { MinLength } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/typechecker/IsArray.js' {
  export { IsArray } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/typechecker/IsBoolean.js' {
  export { IsBoolean } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/typechecker/IsInt.js' {
  export { IsInt } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/typechecker/IsObject.js' {
  export { IsObject } from 'class-validator';
}
declare module 'class-validator/cjs/decorator/typechecker/IsString.js' {
  export { IsString } from 'class-validator';
}
declare module 'class-validator/cjs/metadata/MetadataStorage.js' {
  export { getMetadataStorage } from 'class-validator';
}
