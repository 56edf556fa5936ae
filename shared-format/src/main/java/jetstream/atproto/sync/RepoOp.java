package jetstream.atproto.sync;

import jetstream.atproto.cid.Cid;

/**
 * One operation of a firehose {@code #commit}: {@code action} is create, update or delete;
 * {@code cid} is the new record (null for delete); {@code prev} the replaced record (Sync 1.1: set
 * for update and delete, absent for create).
 */
public record RepoOp(String action, String path, Cid cid, Cid prev) {}
