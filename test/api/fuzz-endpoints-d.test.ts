/** The endpoint fuzzer (test/helpers/fuzz.ts) on a quarter of ENDPOINTS (positions 3 mod 4). */
import t from 'tap';
import { runFuzz } from '../helpers/fuzz-run.js';

runFuzz(t, (i) => i % 4 === 3);
