/** The endpoint fuzzer (test/helpers/fuzz.ts) on the second half of ENDPOINTS (odd positions). */
import t from 'tap';
import { runFuzz } from '../helpers/fuzz-run.js';

runFuzz(t, (i) => i % 2 === 1);
