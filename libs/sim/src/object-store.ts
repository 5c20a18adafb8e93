import { createHash, createHmac } from 'node:crypto';
import { createReadStream, createWriteStream, renameSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream/promises';

// An S3 client for what K3s does with etcd snapshots (upload, download, list, delete), signed with AWS Signature
// Version 4 (path-style requests, the signed payload hash). Node's own https, so a private CA needs no dispatcher and
// no SDK joins the dependencies. Snapshots stream between a file and the store: the provider never holds one whole
// (a cluster owner decides how large their etcd grows, up to its quota).

/** Where snapshots go: K3s's `etcd-s3-*` settings. */
export interface ObjectStoreLocation {
  /** `host[:port]`, as K3s's `etcd-s3-endpoint` (no scheme). */
  endpoint: string;
  bucket: string;
  /** Key prefix without slashes at either end (`etcd-s3-folder`); empty for the bucket's root. */
  folder?: string;
  region?: string;
  /** Plain HTTP (`etcd-s3-insecure`). */
  insecure?: boolean;
  /** PEM bundle trusted for the endpoint (`etcd-s3-endpoint-ca`); unset: the system's. */
  caPem?: string;
  skipTlsVerify?: boolean;
}

export interface ObjectStoreCredentials {
  accessKey: string;
  secretKey: string;
}

export interface StoredObject {
  key: string;
  size: number;
  lastModified: string;
}

export type ObjectStoreErrorReason =
  | 'S3Unreachable'
  | 'S3AccessDenied'
  | 'S3NoSuchBucket'
  | 'S3NoSuchKey'
  | 'S3RequestFailed'
  | 'S3ObjectTooLarge';

/** A failed S3 request: the operation, endpoint, bucket and key, S3's error code; never a credential. */
export class ObjectStoreError extends Error {
  override readonly name = 'ObjectStoreError';
  constructor(
    message: string,
    readonly reason: ObjectStoreErrorReason,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const DEFAULT_REGION = 'us-east-1';
const REQUEST_TIMEOUT_MS = 60_000;
/** A listing or an error body is small; more is not S3. */
const MAX_METADATA_BYTES = 4 * 1024 * 1024;

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** A request body: its SigV4 payload hash, its length, and how it is written. */
interface RequestBody {
  hash: string;
  length: number;
  send(req: ClientRequest): void;
}

const EMPTY_BODY: RequestBody = { hash: sha256Hex(''), length: 0, send: (req) => req.end() };

/** A file as a request body: hashed by reading it once, then streamed (SigV4 signs the hash before the bytes go). */
async function fileBody(path: string): Promise<RequestBody> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return {
    hash: hash.digest('hex'),
    length: statSync(path).size,
    send: (req) => {
      const file = createReadStream(path);
      file.on('error', (error) => req.destroy(error));
      file.pipe(req);
    },
  };
}

/** Where a successful response body goes: memory (a listing or a small answer), or a file. */
type ResponseSink = { kind: 'memory'; maxBytes: number } | { kind: 'file'; path: string; maxBytes: number };
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding, as SigV4 wants it (`/` kept in paths). */
function uriEncode(value: string, keepSlash: boolean): string {
  return [...Buffer.from(value, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      if (/[A-Za-z0-9\-._~]/.test(char) || (keepSlash && char === '/')) return char;
      return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** The key of `name` under the location's folder. */
export function objectKey(location: ObjectStoreLocation, name: string): string {
  const folder = (location.folder ?? '').replace(/^\/+|\/+$/g, '');
  return folder ? `${folder}/${name}` : name;
}

export interface SignedRequestInput {
  method: string;
  host: string;
  path: string;
  query: Record<string, string>;
  payloadHash: string;
  region: string;
  credentials: ObjectStoreCredentials;
  now: Date;
}

/** The headers of a SigV4-signed request (exported for the unit test against AWS's published example). */
export function signRequest(input: SignedRequestInput): Record<string, string> {
  const amzDate = input.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    host: input.host,
    'x-amz-content-sha256': input.payloadHash,
    'x-amz-date': amzDate,
  };
  const signedHeaders = Object.keys(headers).sort();
  const canonicalQuery = Object.keys(input.query)
    .sort()
    .map((name) => `${uriEncode(name, false)}=${uriEncode(input.query[name]!, false)}`)
    .join('&');
  const canonicalRequest = [
    input.method,
    uriEncode(input.path, true),
    canonicalQuery,
    ...signedHeaders.map((name) => `${name}:${headers[name]!.trim()}`),
    '',
    signedHeaders.join(';'),
    input.payloadHash,
  ].join('\n');
  const scope = `${day}/${input.region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${input.credentials.secretKey}`, day), input.region), 's3'),
    'aws4_request',
  );
  const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKey}/${scope}, SignedHeaders=${signedHeaders.join(';')}, Signature=${signature}`,
  };
}

interface Response {
  status: number;
  body: Buffer;
}

/** The S3 error code of an error response (`<Code>…</Code>`), if it has one. */
const errorCode = (body: Buffer) => /<Code>([^<]{1,64})<\/Code>/.exec(body.toString('utf8'))?.[1];

export class ObjectStore {
  constructor(
    readonly location: ObjectStoreLocation,
    private readonly credentials: ObjectStoreCredentials,
  ) {}

  private describe(operation: string, key?: string): string {
    const target = key === undefined ? this.location.bucket : `${this.location.bucket}/${key}`;
    return `S3 ${operation} of ${target} at ${this.location.endpoint}`;
  }

  private send(
    method: string,
    key: string | undefined,
    query: Record<string, string>,
    body: RequestBody,
    sink: ResponseSink,
  ): Promise<Response> {
    const path = `/${this.location.bucket}${key === undefined ? '' : `/${key}`}`;
    const headers = signRequest({
      method,
      host: this.location.endpoint,
      path,
      query,
      payloadHash: body.hash,
      region: this.location.region || DEFAULT_REGION,
      credentials: this.credentials,
      now: new Date(),
    });
    const search = Object.keys(query).length > 0 ? `?${new URLSearchParams(query).toString()}` : '';
    const url = `${this.location.insecure ? 'http' : 'https'}://${this.location.endpoint}${uriEncode(path, true)}${search}`;
    const send = this.location.insecure ? httpRequest : httpsRequest;
    return new Promise<Response>((resolve, reject) => {
      // The first failure wins: cutting off a response that is too large also fails the request's socket.
      let failure: ObjectStoreError | undefined;
      // A download into a file settles when the file is complete or cleaned up, not when the socket fails.
      let receiving = false;
      const unreachable = (error: Error) =>
        failure ??
        new ObjectStoreError(`${this.describe(method, key)} failed: ${error.message}`, 'S3Unreachable', {
          cause: error,
        });
      const tooLarge = (maxBytes: number) =>
        (failure ??= new ObjectStoreError(
          `${this.describe(method, key)}: the response exceeds ${maxBytes} bytes`,
          'S3ObjectTooLarge',
        ));
      const req = send(
        url,
        {
          method,
          headers: { ...headers, ...(body.length > 0 && { 'content-length': String(body.length) }) },
          timeout: REQUEST_TIMEOUT_MS,
          ...(!this.location.insecure && {
            ...(this.location.caPem && { ca: this.location.caPem }),
            rejectUnauthorized: !this.location.skipTlsVerify,
          }),
        },
        (res: IncomingMessage) => {
          const status = res.statusCode ?? 0;
          // An error answer is read into memory (its code is in the XML), bounded as a listing is.
          if (sink.kind === 'file' && status >= 200 && status < 300) {
            receiving = true;
            this.receiveFile(res, sink, tooLarge, unreachable).then(
              () => resolve({ status, body: Buffer.alloc(0) }),
              reject,
            );
            return;
          }
          const maxBytes = sink.kind === 'memory' ? sink.maxBytes : MAX_METADATA_BYTES;
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) {
              res.destroy();
              reject(tooLarge(maxBytes));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000}s`)));
      req.on('error', (error) => {
        if (!receiving) reject(unreachable(error));
      });
      body.send(req);
    });
  }

  /**
   * Streams a response into `sink.path` through a `.partial` file, stopping past `maxBytes`: a download that fails
   * or is too large leaves no file under the name.
   */
  private async receiveFile(
    res: IncomingMessage,
    sink: Extract<ResponseSink, { kind: 'file' }>,
    tooLarge: (maxBytes: number) => ObjectStoreError,
    unreachable: (error: Error) => ObjectStoreError,
  ): Promise<void> {
    const partial = `${sink.path}.partial`;
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > sink.maxBytes) res.destroy(tooLarge(sink.maxBytes));
    });
    try {
      await pipeline(res, createWriteStream(partial, { mode: 0o600 }));
    } catch (error) {
      rmSync(partial, { force: true });
      throw error instanceof ObjectStoreError ? error : unreachable(error as Error);
    }
    renameSync(partial, sink.path);
  }

  private check(response: Response, operation: string, key?: string): void {
    if (response.status >= 200 && response.status < 300) return;
    const code = errorCode(response.body);
    const where = this.describe(operation, key);
    if (code === 'NoSuchBucket')
      throw new ObjectStoreError(`${where}: the bucket does not exist`, 'S3NoSuchBucket');
    if (code === 'NoSuchKey' || response.status === 404)
      throw new ObjectStoreError(`${where}: no such object`, 'S3NoSuchKey');
    if (
      response.status === 403 ||
      code === 'SignatureDoesNotMatch' ||
      code === 'InvalidAccessKeyId' ||
      code === 'AccessDenied'
    ) {
      throw new ObjectStoreError(
        `${where} was refused (${code ?? response.status}): check the access key and secret key`,
        'S3AccessDenied',
      );
    }
    throw new ObjectStoreError(
      `${where} answered ${response.status}${code ? ` ${code}` : ''}`,
      'S3RequestFailed',
    );
  }

  /** Uploads the file at `path` as object `name` (under the folder), streamed; returns the object's key. */
  async putFile(name: string, path: string): Promise<string> {
    const key = objectKey(this.location, name);
    const body = await fileBody(path);
    this.check(
      await this.send('PUT', key, {}, body, { kind: 'memory', maxBytes: MAX_METADATA_BYTES }),
      'upload',
      key,
    );
    return key;
  }

  /** Downloads object `name` into the file at `path`, streamed and refused past `maxBytes` (no file left then). */
  async getFile(name: string, path: string, maxBytes: number): Promise<void> {
    const key = objectKey(this.location, name);
    const response = await this.send('GET', key, {}, EMPTY_BODY, { kind: 'file', path, maxBytes });
    this.check(response, 'download', key);
  }

  async delete(name: string): Promise<void> {
    const key = objectKey(this.location, name);
    this.check(
      await this.send('DELETE', key, {}, EMPTY_BODY, { kind: 'memory', maxBytes: MAX_METADATA_BYTES }),
      'delete',
      key,
    );
  }

  /** The objects under the folder whose names start with `prefix` (every page). */
  async list(prefix = ''): Promise<StoredObject[]> {
    const objects: StoredObject[] = [];
    let token: string | undefined;
    do {
      const query: Record<string, string> = {
        'list-type': '2',
        prefix: objectKey(this.location, prefix),
        ...(token && { 'continuation-token': token }),
      };
      const response = await this.send('GET', undefined, query, EMPTY_BODY, {
        kind: 'memory',
        maxBytes: MAX_METADATA_BYTES,
      });
      this.check(response, 'list');
      const xml = response.body.toString('utf8');
      for (const [, entry] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
        const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(entry!)?.[1] ?? '';
        objects.push({
          key: unescapeXml(field('Key')),
          size: Number(field('Size')),
          lastModified: field('LastModified'),
        });
      }
      token = /<IsTruncated>true<\/IsTruncated>/.test(xml)
        ? /<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)?.[1]
        : undefined;
    } while (token);
    return objects;
  }
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
