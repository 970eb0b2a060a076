/**
 * The package version, sent in the delivery reports' `User-Agent`. Written here rather than
 * read from package.json so the build does not ship package.json inside the bundle; a test
 * keeps the two equal.
 */
export const VERSION = '0.1.0';
