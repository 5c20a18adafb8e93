import { readFileSync } from 'node:fs';
import { Controller, Get, Res } from '@nestjs/common';
import type { ServerResponse as Response } from 'node:http';

/** The page and its script, shipped in the package (apps/dashboard/web): nothing is fetched from elsewhere at run time. */
const WEB_DIR = new URL('../../web/', import.meta.url);

/**
 * What the browser runs may come only from here (no inline script, no other origin), and no other site may frame the
 * page (clickjacking): the page holds the user's token.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function asset(name: string): string {
  return readFileSync(new URL(name, WEB_DIR), 'utf8');
}

/** The single-page app (served over HTTPS with the API). */
@Controller('dashboard')
export class WebController {
  private readonly page = asset('index.html');
  private readonly script = asset('app.js');
  private readonly style = asset('app.css');

  @Get()
  index(@Res() response: Response): void {
    response
      .writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' })
      .end(this.page);
  }

  @Get('app.js')
  app(@Res() response: Response): void {
    response
      .writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/javascript; charset=utf-8' })
      .end(this.script);
  }

  @Get('app.css')
  css(@Res() response: Response): void {
    response
      .writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/css; charset=utf-8' })
      .end(this.style);
  }
}
