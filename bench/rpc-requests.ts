/** The wire requests bench and tests share now live in tests/fixtures/rpc-requests.ts (bench may import tests/fixtures, never the reverse). */
export * from '../tests/fixtures/rpc-requests.ts';
