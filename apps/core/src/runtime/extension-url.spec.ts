import { extensionBaseUrl, extensionCallUrl } from './extension-url.js';
import { ExtensionConfigError } from './runtime-errors.js';

describe('the URL of an extension', () => {
  it('is the Service in the cluster, port 443 unless given, with its path', () => {
    expect(extensionBaseUrl({ service: { namespace: 'ext', name: 'hooks' } }).href).toBe(
      'https://hooks.ext.svc/',
    );
    expect(
      extensionCallUrl({ service: { namespace: 'ext', name: 'hooks', port: 9443, path: '/prefix/' } }, '/a/b')
        .href,
    ).toBe('https://hooks.ext.svc:9443/prefix/a/b');
  });

  it("joins the hook's path onto the URL's path and says how long the caller waits", () => {
    const url = extensionCallUrl({ url: 'https://ext.example:8443/base/' }, '/hooks/v1/discovery', 10);
    expect(url.href).toBe('https://ext.example:8443/base/hooks/v1/discovery?timeout=10s');
  });

  it.each([
    ['http://ext.example', 'must use https'],
    ['https://user:pass@ext.example', 'user info'],
    ['https://ext.example/?a=b', 'query'],
    ['https://ext.example/#frag', 'fragment'],
    ['not a url', 'not a URL'],
  ])('refuses %s', (url, problem) => {
    expect(() => extensionBaseUrl({ url })).toThrow(ExtensionConfigError);
    expect(() => extensionBaseUrl({ url })).toThrow(problem);
  });

  it('does not quote a refused URL (it may hold a credential)', () => {
    expect(() => extensionBaseUrl({ url: 'https://user:s3cret@ext.example' })).not.toThrow(/s3cret/);
  });

  it('needs a URL or a Service', () => {
    expect(() => extensionBaseUrl({})).toThrow('needs a url or a service');
  });
});
