package jetstream.wire;

import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.json.JsonBuffer;

/**
 * The fields of a stored {@code #identity}, {@code #account} or {@code #sync} payload (the upstream
 * event body as DAG-CBOR) that the wires render, located without building a tree. Text and byte
 * fields are offsets into the payload; absent ones have offset -1. Reusable; not thread-safe.
 */
final class UpstreamBody {
    private final CborReader r = new CborReader();
    byte[] src;
    int typeOff;
    int typeLen;
    int didOff;
    int didLen;
    int handleOff;
    int handleLen;
    int timeOff;
    int timeLen;
    int statusOff;
    int statusLen;
    int revOff;
    int revLen;
    int blocksOff;
    int blocksLen;
    long seq;
    boolean active;

    void parse(byte[] payload, int off, int len) {
        src = payload;
        typeOff = didOff = handleOff = timeOff = statusOff = revOff = blocksOff = -1;
        typeLen = didLen = handleLen = timeLen = statusLen = revLen = blocksLen = 0;
        seq = 0;
        active = false;
        r.reset(payload, off, len);
        if (!r.hasRemaining() || r.peekKind() != CborReader.KIND_MAP) {
            throw new DecodeException("payload_not_map", "stored event body is not a CBOR map");
        }
        int n = r.readMapHeader();
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "$type")) {
                typeLen = r.readText();
                typeOff = r.lastOffset();
            } else if (r.keyEquals(prevLen, "did")) {
                didLen = r.readText();
                didOff = r.lastOffset();
            } else if (r.keyEquals(prevLen, "handle")) {
                if (!r.tryReadNull()) {
                    handleLen = r.readText();
                    handleOff = r.lastOffset();
                }
            } else if (r.keyEquals(prevLen, "time")) {
                timeLen = r.readText();
                timeOff = r.lastOffset();
            } else if (r.keyEquals(prevLen, "status")) {
                if (!r.tryReadNull()) {
                    statusLen = r.readText();
                    statusOff = r.lastOffset();
                }
            } else if (r.keyEquals(prevLen, "rev")) {
                revLen = r.readText();
                revOff = r.lastOffset();
            } else if (r.keyEquals(prevLen, "blocks")) {
                blocksLen = r.readBytes();
                blocksOff = r.lastOffset();
            } else if (r.keyEquals(prevLen, "seq")) {
                seq = r.readInt();
            } else if (r.keyEquals(prevLen, "active")) {
                active = r.readBool();
            } else {
                r.skip();
            }
        }
        r.requireEnd();
    }

    /** How a wire writes a string taken from the body: v1 and v2 escape differently (decision 6). */
    @FunctionalInterface
    interface Strings {
        void append(byte[] src, int off, int len, JsonBuffer out);
    }

    /** The inner {@code identity} object: {@code $type?, did, handle?, seq, time}. */
    void writeIdentity(JsonBuffer out, Strings strings) {
        out.append((byte) '{');
        type(out, strings);
        field(out, strings, "\"did\":", didOff, didLen);
        if (handleOff >= 0) {
            field(out, strings, ",\"handle\":", handleOff, handleLen);
        }
        out.appendAscii(",\"seq\":");
        out.appendLong(seq);
        field(out, strings, ",\"time\":", timeOff, timeLen);
        out.append((byte) '}');
    }

    /** The inner {@code account} object: {@code $type?, active, did, seq, status?, time}. */
    void writeAccount(JsonBuffer out, Strings strings) {
        out.append((byte) '{');
        type(out, strings);
        out.appendAscii("\"active\":");
        out.appendBoolean(active);
        field(out, strings, ",\"did\":", didOff, didLen);
        out.appendAscii(",\"seq\":");
        out.appendLong(seq);
        if (statusOff >= 0) {
            field(out, strings, ",\"status\":", statusOff, statusLen);
        }
        field(out, strings, ",\"time\":", timeOff, timeLen);
        out.append((byte) '}');
    }

    /** {@code $type} leads the inner object only when the stored body carries one (upstream bodies do not). */
    void type(JsonBuffer out, Strings strings) {
        if (typeOff >= 0) {
            out.appendAscii("\"$type\":");
            strings.append(src, typeOff, typeLen, out);
            out.append((byte) ',');
        }
    }

    /** A required string field; an absent one renders empty, as the generated structs do. */
    void field(JsonBuffer out, Strings strings, String key, int off, int len) {
        out.appendAscii(key);
        if (off < 0) {
            out.appendAscii("\"\"");
        } else {
            strings.append(src, off, len, out);
        }
    }
}
