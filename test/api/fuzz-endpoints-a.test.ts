/** The endpoint fuzzer (test/helpers/fuzz.ts) on the first half of ENDPOINTS (even positions). */
import t from 'tap';
import { runFuzz } from '../helpers/fuzz-run.js';

runFuzz(t, (i) => i % 2 === 0);
