import { isRecord, type Unstructured } from '../contract/unstructured.js';
import { ConversionError } from './conversion-error.js';

/**
 * Where a v1beta1 object keeps what only v1beta2 can say (upstream's `cluster.x-k8s.io/conversion-data`): the whole
 * v1beta2 object without its metadata, as JSON.
 */
export const CONVERSION_DATA_ANNOTATION = 'cluster.x-k8s.io/conversion-data';

/** Writes the v1beta2 object (metadata left out) into the v1beta1 object's annotation. */
export function storeConversionData(hub: Unstructured, spoke: Unstructured): void {
  const { metadata: _metadata, ...rest } = hub;
  const metadata = isRecord(spoke['metadata']) ? spoke['metadata'] : {};
  const annotations = isRecord(metadata['annotations']) ? metadata['annotations'] : {};
  spoke['metadata'] = { ...metadata, annotations: { ...annotations, [CONVERSION_DATA_ANNOTATION]: JSON.stringify(rest) } };
}

/**
 * Takes the annotation off the converted object (it never persists on a v1beta2 object) and returns what it held:
 * the v1beta2 object a v1beta1 reader was given, or undefined when there was none.
 */
export function takeConversionData(converted: Unstructured): Unstructured | undefined {
  const metadata = converted['metadata'];
  if (!isRecord(metadata) || !isRecord(metadata['annotations'])) return undefined;
  const annotations = { ...metadata['annotations'] };
  const raw = annotations[CONVERSION_DATA_ANNOTATION];
  if (raw === undefined) return undefined;
  delete annotations[CONVERSION_DATA_ANNOTATION];
  converted['metadata'] = { ...metadata, annotations };
  if (Object.keys(annotations).length === 0) delete (converted['metadata'] as Unstructured)['annotations'];
  if (typeof raw !== 'string') throw new ConversionError('is not a string', `metadata.annotations.${CONVERSION_DATA_ANNOTATION}`);
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!isRecord(parsed)) throw new Error('not an object');
    return parsed;
  } catch {
    throw new ConversionError('is not the JSON of an object', `metadata.annotations.${CONVERSION_DATA_ANNOTATION}`);
  }
}
