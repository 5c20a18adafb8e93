import { objectKey, signRequest } from './object-store.js';

// AWS's published Signature Version 4 examples for S3 (the "GET Bucket Lifecycle" and "Get Bucket (List Objects)"
// requests of the "Signature Calculations for the Authorization Header" page), with its example key pair.
const example = {
  credentials: { accessKey: 'AKIAIOSFODNN7EXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
  host: 'examplebucket.s3.amazonaws.com',
  region: 'us-east-1',
  payloadHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  now: new Date('2013-05-24T00:00:00Z'),
};

describe('S3 request signing (AWS Signature Version 4)', () => {
  it('signs a request with a query parameter that has no value as AWS does', () => {
    const headers = signRequest({ ...example, method: 'GET', path: '/', query: { lifecycle: '' } });
    expect(headers['x-amz-date']).toBe('20130524T000000Z');
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
        'SignedHeaders=host;x-amz-content-sha256;x-amz-date, ' +
        'Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543',
    );
  });

  it('sorts and encodes query parameters as AWS does', () => {
    const headers = signRequest({
      ...example,
      method: 'GET',
      path: '/',
      query: { prefix: 'J', 'max-keys': '2' },
    });
    expect(headers.authorization).toContain(
      'Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7',
    );
  });

  it('changes the signature with the secret key', () => {
    const other = signRequest({
      ...example,
      credentials: { ...example.credentials, secretKey: 'another' },
      method: 'GET',
      path: '/',
      query: { lifecycle: '' },
    });
    expect(other.authorization).not.toContain(
      'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543',
    );
  });

  it('puts objects under the folder, without doubled slashes', () => {
    expect(objectKey({ endpoint: 'e', bucket: 'b', folder: '/snapshots/demo/' }, 'x.db')).toBe(
      'snapshots/demo/x.db',
    );
    expect(objectKey({ endpoint: 'e', bucket: 'b' }, 'x.db')).toBe('x.db');
  });
});
