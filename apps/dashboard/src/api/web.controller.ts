import { Controller, Get, NotFoundException, Req, Res } from '@nestjs/common';
import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import { LIT_HTML_PREFIX, loadWebAssets, type WebAsset } from './web-assets.js';

/**
 * What the browser runs may come only from here (no inline script, no eval, no other origin), and no other site may
 * frame the page (clickjacking): the page holds the user's token.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const PREFIX = '/dashboard/';

/**
 * The single-page app (served over HTTPS with the API): the page's own files and the lit-html modules it imports, a
 * fixed list read at start (web-assets.ts). A request names one of them by its exact path or gets 404: the path is
 * looked up as it came, never joined to a folder.
 */
@Controller('dashboard')
export class WebController {
  private readonly assets = loadWebAssets();

  @Get()
  index(@Res() response: Response): void {
    this.send(response, this.assets.get('index.html')!);
  }

  @Get(':file')
  file(@Req() request: Request, @Res() response: Response): void {
    this.send(response, this.lookup(request));
  }

  @Get(`${LIT_HTML_PREFIX}*path`)
  vendor(@Req() request: Request, @Res() response: Response): void {
    this.send(response, this.lookup(request));
  }

  private lookup(request: Request): WebAsset {
    // Express keeps the request's own path as originalUrl (url may be rewritten by a router).
    const raw = (request as Request & { originalUrl?: string }).originalUrl ?? request.url ?? '';
    const path = raw.split('?')[0]!;
    const asset = path.startsWith(PREFIX) ? this.assets.get(path.slice(PREFIX.length)) : undefined;
    if (!asset) throw new NotFoundException();
    return asset;
  }

  private send(response: Response, asset: WebAsset): void {
    response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.contentType }).end(asset.body);
  }
}
