/**
 * The timestamp import (operator CSV of record timestamps): the two endpoints, the streaming CSV reader,
 * the durable rule map the steady writer consults, and the job that buckets rows and patches sealed segments.
 * May depend on {@code store}, {@code writer}, {@code jetstream.segment} and service-common.
 */
package jetstream.ingester.importer;
