/**
 * Backfill: the bootstrap crawl (roster from {@code listHosts}, {@code listRepos} per host with durable cursors,
 * {@code getRepo} downloads under a byte budget), the one repository download path, whole-repo replacement,
 * the failed-repo retrier and exhausted-host re-listing, and the {@code repo/} and {@code pdshost/} rows.
 * May depend on {@code store}, {@code writer}, {@code net}, the atproto packages and {@code jetstream.feed}.
 */
package jetstream.ingester.backfill;
