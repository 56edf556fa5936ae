/**
 * The ingester's metadata store {@code data/meta.rocksdb} (keys in docs/metadata-keys.md): synced batch
 * writes, bounded page scans, fatal on any failed read or write. Only the ingester opens it.
 * May depend on {@code jetstream.feed} (values) and RocksDB; every other ingester package depends on it.
 */
package jetstream.ingester.store;
