// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill loaded
// before the library itself; every module of this library imports x509 from here so that order holds.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

export { x509, webcrypto };
