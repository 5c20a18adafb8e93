// The field rules events share, each as one decorator, so the data classes read as lists of fields.
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from '@capstan/api';
import { DNS_SUBDOMAIN_PATTERN } from './object-reference.js';

function all(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => decorators.forEach((decorate) => decorate(target, key));
}

const optionally = (optional: boolean, decorator: PropertyDecorator) =>
  optional ? all(IsOptional(), decorator) : decorator;

/** A Kubernetes object name (DNS-1123 subdomain). */
export const ObjectName = ({ optional = false } = {}) =>
  optionally(optional, all(MaxLength(253), Matches(DNS_SUBDOMAIN_PATTERN)));

/** A non-empty string of bounded length. */
export const Text = (maxLength: number, { optional = false } = {}) =>
  optionally(optional, all(IsString(), IsNotEmpty(), MaxLength(maxLength)));

/** A provider ID such as `sim://default/demo-md-0-abcde`. */
export const ProviderId = () => Text(512);

/** A CamelCase reason, as condition reasons are written. */
export const Reason = () => Matches(/^[A-Za-z][A-Za-z0-9]{0,127}$/);

/** A replica count. */
export const Count = () => all(IsInt(), Min(0));

/** A nested object (or, with `each`, an array of them) validated as its class. */
export const Nested = (type: () => new () => object, { optional = false, each = false } = {}) =>
  // ValidateNested passes a missing value: a required one must be said to be so (IsDefined), or a decoder reading it
  // fails with a TypeError instead of refusing the event.
  optional ? all(IsOptional(), ValidateNested({ each }), Type(type)) : all(IsDefined(), ValidateNested({ each }), Type(type));
