// The contract the pages carry (testdata/contract.json, written by web's TestContract), installed
// for the modules under test: import this first, before any module that reads the contract.
import { readFileSync } from 'node:fs';
import { installContract } from '../js/contract.js';

/** The file as written: the contract, the demo's geometry, and real runs' addresses and segments. */
export const served = JSON.parse(readFileSync(new URL('./testdata/contract.json', import.meta.url), 'utf8'));
installContract(served.contract);
