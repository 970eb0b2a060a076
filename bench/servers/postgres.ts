/**
 * Router server with PostgreSQL storage in the schema BENCH_PG_SCHEMA (the harness makes
 * a fresh one per run and drops it after). Connection from the usual PG* variables,
 * default 127.0.0.1:5432, user postgres, database test.
 */
import pg from 'pg';
import { PostgresStorage } from '../../src/postgres.js';
import { startRouterServer } from './router-host.js';

const schema = process.env.BENCH_PG_SCHEMA;
if (schema === undefined || schema === '') throw new Error('BENCH_PG_SCHEMA is required');
const pool = new pg.Pool({
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
  database: process.env.PGDATABASE ?? 'test',
  max: 20,
});
await startRouterServer(new PostgresStorage({ pool, schema }), () => pool.end());
