/**
 * The repository Merkle Search Tree: node codec, key layers, a lazily loaded mutable tree (works over a
 * partial tree such as a commit's CAR diff) and a verifying whole-tree walker.
 * May depend on {@code jetstream.atproto} and its {@code cid}, {@code cbor}, {@code car}, {@code crypto} sub-packages.
 */
package jetstream.atproto.mst;
