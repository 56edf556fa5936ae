package jetstream.atproto.firehose;

import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cid.Cid;

/**
 * Decodes {@code com.atproto.sync.subscribeRepos} frames: two DAG-CBOR items back to back, a header
 * {@code {op, t}} and a body map. {@code op = 1} is a message whose body type is {@code t}
 * ({@code #commit}, {@code #identity}, {@code #account}, {@code #sync}, {@code #info}); {@code op = -1}
 * is an error frame {@code {error, message}}. The frame must end exactly after the body.
 *
 * <p>Input is untrusted: every failure is a {@link DecodeException} (reason prefixed
 * {@code firehose_} for frame-level problems, the CBOR reader's reasons otherwise). Unknown body
 * keys are validated and skipped, so additive upstream changes keep decoding. Not thread-safe; one
 * instance per consumer thread.
 */
public final class FrameDecoder {
    private final CborReader r = new CborReader();
    private byte[] buf;

    public FirehoseMessage decode(byte[] frame) {
        return decode(frame, 0, frame.length);
    }

    public FirehoseMessage decode(byte[] frame, int off, int len) {
        buf = frame;
        r.reset(frame, off, len);
        if (!r.hasRemaining() || r.peekKind() != CborReader.KIND_MAP) {
            throw new DecodeException("firehose_header", "frame header is not a CBOR map");
        }
        long op = 0;
        boolean hasOp = false;
        String type = null;
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "op")) {
                op = r.readInt();
                hasOp = true;
            } else if (r.keyEquals(prevLen, "t")) {
                type = r.readString();
            } else {
                r.skip();
            }
        }
        if (!hasOp) {
            throw new DecodeException("firehose_header", "frame header has no op");
        }
        if (!r.hasRemaining() || r.peekKind() != CborReader.KIND_MAP) {
            throw new DecodeException("firehose_body", "frame body is not a CBOR map");
        }
        FirehoseMessage message;
        if (op == 1) {
            if (type == null) {
                throw new DecodeException("firehose_header", "message frame without a type");
            }
            message = switch (type) {
                case "#commit" -> commit();
                case "#identity" -> identity();
                case "#account" -> account();
                case "#sync" -> sync();
                case "#info" -> info();
                default -> {
                    r.skip();
                    yield new FirehoseMessage.Unknown(type);
                }
            };
        } else if (op == -1) {
            message = error();
        } else {
            throw new DecodeException("firehose_header", "unknown frame op " + op);
        }
        r.requireEnd();
        return message;
    }

    private FirehoseMessage.Commit commit() {
        long seq = -1;
        String repo = null;
        String rev = null;
        String since = null;
        Cid commit = null;
        Cid prevData = null;
        ByteSlice blocks = null;
        List<FirehoseMessage.RepoOp> ops = null;
        String time = null;
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "seq")) {
                seq = r.readInt();
            } else if (r.keyEquals(prevLen, "repo")) {
                repo = r.readString();
            } else if (r.keyEquals(prevLen, "rev")) {
                rev = r.readString();
            } else if (r.keyEquals(prevLen, "since")) {
                since = r.tryReadNull() ? null : r.readString();
            } else if (r.keyEquals(prevLen, "commit")) {
                commit = r.readCid();
            } else if (r.keyEquals(prevLen, "prevData")) {
                prevData = r.tryReadNull() ? null : r.readCid();
            } else if (r.keyEquals(prevLen, "blocks")) {
                blocks = bytes();
            } else if (r.keyEquals(prevLen, "ops")) {
                ops = ops();
            } else if (r.keyEquals(prevLen, "time")) {
                time = r.readString();
            } else {
                r.skip();
            }
        }
        require(seq >= 0 && repo != null && rev != null && commit != null && blocks != null && ops != null,
                "#commit needs seq, repo, rev, commit, blocks and ops");
        return new FirehoseMessage.Commit(seq, repo, rev, since, commit, prevData, blocks, ops, time);
    }

    private List<FirehoseMessage.RepoOp> ops() {
        int count = r.readArrayHeader();
        List<FirehoseMessage.RepoOp> ops = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            if (r.peekKind() != CborReader.KIND_MAP) {
                throw new DecodeException("firehose_field_type", "commit op is not a map");
            }
            String action = null;
            String path = null;
            Cid cid = null;
            Cid prev = null;
            int n = r.readMapHeader();
            int prevOff = 0;
            int prevLen = -1;
            for (int i = 0; i < n; i++) {
                prevLen = r.readKey(prevOff, prevLen);
                prevOff = r.lastOffset();
                if (r.keyEquals(prevLen, "action")) {
                    action = r.readString();
                } else if (r.keyEquals(prevLen, "path")) {
                    path = r.readString();
                } else if (r.keyEquals(prevLen, "cid")) {
                    cid = r.tryReadNull() ? null : r.readCid();
                } else if (r.keyEquals(prevLen, "prev")) {
                    prev = r.tryReadNull() ? null : r.readCid();
                } else {
                    r.skip();
                }
            }
            require(action != null && path != null, "commit op needs action and path");
            ops.add(new FirehoseMessage.RepoOp(action, path, cid, prev));
        }
        return ops;
    }

    private FirehoseMessage.Identity identity() {
        int start = r.position();
        long seq = -1;
        String did = null;
        String time = null;
        String handle = null;
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "seq")) {
                seq = r.readInt();
            } else if (r.keyEquals(prevLen, "did")) {
                did = r.readString();
            } else if (r.keyEquals(prevLen, "time")) {
                time = r.readString();
            } else if (r.keyEquals(prevLen, "handle")) {
                handle = r.tryReadNull() ? null : r.readString();
            } else {
                r.skip();
            }
        }
        require(seq >= 0 && did != null, "#identity needs seq and did");
        return new FirehoseMessage.Identity(seq, did, time, handle, sliceFrom(start));
    }

    private FirehoseMessage.Account account() {
        int start = r.position();
        long seq = -1;
        String did = null;
        String time = null;
        Boolean active = null;
        String status = null;
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "seq")) {
                seq = r.readInt();
            } else if (r.keyEquals(prevLen, "did")) {
                did = r.readString();
            } else if (r.keyEquals(prevLen, "time")) {
                time = r.readString();
            } else if (r.keyEquals(prevLen, "active")) {
                active = r.readBool();
            } else if (r.keyEquals(prevLen, "status")) {
                status = r.tryReadNull() ? null : r.readString();
            } else {
                r.skip();
            }
        }
        require(seq >= 0 && did != null && active != null, "#account needs seq, did and active");
        return new FirehoseMessage.Account(seq, did, time, active, status, sliceFrom(start));
    }

    private FirehoseMessage.Sync sync() {
        int start = r.position();
        long seq = -1;
        String did = null;
        String rev = null;
        String time = null;
        ByteSlice blocks = null;
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "seq")) {
                seq = r.readInt();
            } else if (r.keyEquals(prevLen, "did")) {
                did = r.readString();
            } else if (r.keyEquals(prevLen, "rev")) {
                rev = r.readString();
            } else if (r.keyEquals(prevLen, "time")) {
                time = r.readString();
            } else if (r.keyEquals(prevLen, "blocks")) {
                blocks = bytes();
            } else {
                r.skip();
            }
        }
        require(seq >= 0 && did != null && rev != null && blocks != null, "#sync needs seq, did, rev and blocks");
        return new FirehoseMessage.Sync(seq, did, rev, time, blocks, sliceFrom(start));
    }

    private FirehoseMessage.Info info() {
        String name = null;
        String message = null;
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "name")) {
                name = r.readString();
            } else if (r.keyEquals(prevLen, "message")) {
                message = r.tryReadNull() ? null : r.readString();
            } else {
                r.skip();
            }
        }
        require(name != null, "#info needs name");
        return new FirehoseMessage.Info(name, message);
    }

    private FirehoseMessage.Error error() {
        String error = null;
        String message = null;
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "error")) {
                error = r.readString();
            } else if (r.keyEquals(prevLen, "message")) {
                message = r.tryReadNull() ? null : r.readString();
            } else {
                r.skip();
            }
        }
        require(error != null, "error frame needs error");
        return new FirehoseMessage.Error(error, message);
    }

    private ByteSlice bytes() {
        int len = r.readBytes();
        return new ByteSlice(buf, r.lastOffset(), len);
    }

    private ByteSlice sliceFrom(int start) {
        return new ByteSlice(buf, start, r.position() - start);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new DecodeException("firehose_missing_field", message);
        }
    }
}
