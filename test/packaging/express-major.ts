/**
 * Prints the major version of the Express this process loads for `import express from
 * 'express'`, as every host the tests start in a child process imports it. Express 4 has
 * `express.query`; Express 5 removed it.
 */
import express from 'express';

process.stdout.write(String('query' in express ? 4 : 5));
