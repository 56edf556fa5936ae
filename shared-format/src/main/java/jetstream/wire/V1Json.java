package jetstream.wire;

import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.json.CborJson;
import jetstream.atproto.json.JsonBuffer;

/**
 * The Jetstream v1 event JSON of {@code /subscribe} (docs/wire.md: v1 event JSON), written straight into a reusable
 * buffer: {@code did}, {@code time_us}, {@code cursor} (the seq; omitted when 0), {@code kind}, then
 * {@code commit}, {@code identity} or {@code account}. Escaping is Go {@code encoding/json}'s
 * throughout. Sync rows (kind 6) and resync replacement rows (kind 7) have no v1 form.
 *
 * <p>Not thread-safe: one instance per encoding thread, reused across events.
 */
public final class V1Json {
    /** v1 strings use Go encoding/json escaping, as production served them. */
    private static final UpstreamBody.Strings V1_STRINGS = (src, off, len, out) -> out.appendUtf8String(src, off, len);
    private final CborJson record = new CborJson();
    private final UpstreamBody body = new UpstreamBody();
    private final JsonText text = new JsonText();

    /** Whether rows of this kind appear on the v1 wire at all. */
    public static boolean isVisible(int kind) {
        return kind != ArchiveRow.KIND_SYNC && kind != ArchiveRow.KIND_CREATE_RESYNC;
    }

    /**
     * Appends the event's JSON to {@code out}. Returns false, writing nothing, for kinds v1 does not
     * show. On a malformed payload {@code out} is left as it was and the {@link DecodeException}
     * propagates.
     */
    public boolean write(WireEvent e, JsonBuffer out) {
        if (!isVisible(e.kind())) {
            return false;
        }
        int mark = out.length();
        try {
            out.appendAscii("{\"did\":");
            out.appendString(e.did());
            out.appendAscii(",\"time_us\":");
            out.appendLong(e.timeMicros());
            if (e.seq() != 0) {
                out.appendAscii(",\"cursor\":");
                out.appendLong(e.seq());
            }
            switch (e.kind()) {
                case ArchiveRow.KIND_IDENTITY -> identity(e, out);
                case ArchiveRow.KIND_ACCOUNT -> account(e, out);
                default -> commit(e, out);
            }
            out.append((byte) '}');
        } catch (DecodeException ex) {
            out.setLength(mark);
            throw ex;
        }
        return true;
    }

    private void commit(WireEvent e, JsonBuffer out) {
        out.appendAscii(",\"kind\":\"commit\",\"commit\":{\"rev\":");
        out.appendString(e.rev());
        out.appendAscii(switch (e.kind()) {
            case ArchiveRow.KIND_CREATE -> ",\"operation\":\"create\"";
            case ArchiveRow.KIND_UPDATE -> ",\"operation\":\"update\"";
            default -> ",\"operation\":\"delete\"";
        });
        out.appendAscii(",\"collection\":");
        out.appendString(e.collection());
        out.appendAscii(",\"rkey\":");
        out.appendString(e.rkey());
        if (e.kind() != ArchiveRow.KIND_DELETE) {
            out.appendAscii(",\"record\":");
            record.writeRecord(e.payload(), e.payloadOffset(), e.payloadLength(), out);
            out.appendAscii(",\"cid\":");
            text.appendRecordCid(e.payload(), e.payloadOffset(), e.payloadLength(), out);
        }
        out.append((byte) '}');
    }

    private void identity(WireEvent e, JsonBuffer out) {
        body.parse(e.payload(), e.payloadOffset(), e.payloadLength());
        out.appendAscii(",\"kind\":\"identity\",\"identity\":");
        body.writeIdentity(out, V1_STRINGS);
    }

    private void account(WireEvent e, JsonBuffer out) {
        body.parse(e.payload(), e.payloadOffset(), e.payloadLength());
        out.appendAscii(",\"kind\":\"account\",\"account\":");
        body.writeAccount(out, V1_STRINGS);
    }
}
