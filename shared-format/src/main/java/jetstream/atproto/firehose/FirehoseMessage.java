package jetstream.atproto.firehose;

import java.util.List;
import jetstream.atproto.cid.Cid;

/**
 * One decoded {@code com.atproto.sync.subscribeRepos} frame. Only the fields Jetstream uses are
 * surfaced; the others are validated as DAG-CBOR and skipped. Byte fields alias the frame buffer.
 */
public sealed interface FirehoseMessage {

    /** The upstream relay seq (the cursor to resume the firehose from); -1 for info, error and unknown frames. */
    default long seq() {
        return -1;
    }

    /**
     * {@code #commit}: a repository update and its CAR diff. {@code since}, {@code prevData} and
     * {@code time} may be null. {@code tooBig}, {@code rebase} and {@code blobs} are ignored.
     */
    record Commit(long seq, String repo, String rev, String since, Cid commit, Cid prevData, ByteSlice blocks,
                  List<RepoOp> ops, String time) implements FirehoseMessage {}

    /** One op of a commit: {@code action} create/update/delete, {@code path} {@code collection/rkey}. */
    record RepoOp(String action, String path, Cid cid, Cid prev) {}

    /** {@code #identity}; {@code body} is the event's DAG-CBOR map, exactly as received. */
    record Identity(long seq, String did, String time, String handle, ByteSlice body) implements FirehoseMessage {}

    /** {@code #account}; {@code body} is the event's DAG-CBOR map, exactly as received. */
    record Account(long seq, String did, String time, boolean active, String status, ByteSlice body)
            implements FirehoseMessage {}

    /** {@code #sync}; {@code body} is the event's DAG-CBOR map, exactly as received. */
    record Sync(long seq, String did, String rev, String time, ByteSlice blocks, ByteSlice body)
            implements FirehoseMessage {}

    /** {@code #info}: advisory, never archived. */
    record Info(String name, String message) implements FirehoseMessage {}

    /** An error frame ({@code op = -1}); the relay closes the stream after it. */
    record Error(String error, String message) implements FirehoseMessage {}

    /** A message frame whose {@code t} this code does not know; counted and skipped. */
    record Unknown(String type) implements FirehoseMessage {}
}
