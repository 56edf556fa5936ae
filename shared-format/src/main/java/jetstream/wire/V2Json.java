package jetstream.wire;

import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.json.CborJson;
import jetstream.atproto.json.JsonBuffer;

/**
 * The v2 {@code network.bsky.jetstream.subscribeEvents} frames (docs/wire.md: v2 framing, v2 payloads), written straight
 * into a reusable buffer. Message payloads put {@code $type} first and the other keys in
 * alphabetical order; {@code seq} is Jetstream's seq and {@code time} the display time with six
 * fractional digits. Identity, account and sync payloads wrap the stored upstream body (whose own
 * {@code seq}/{@code time} are the relay's). Strings outside {@code record} are escaped as
 * lexicon-generated code does (U+2028/U+2029 left raw); {@code record} is the v1 rendering.
 *
 * <p>Not thread-safe: one instance per encoding thread, reused across events.
 */
public final class V2Json {
    public static final String COMMIT = "network.bsky.jetstream.subscribeEvents#commit";
    public static final String IDENTITY = "network.bsky.jetstream.subscribeEvents#identity";
    public static final String ACCOUNT = "network.bsky.jetstream.subscribeEvents#account";
    public static final String SYNC = "network.bsky.jetstream.subscribeEvents#sync";
    public static final String INFO = "network.bsky.jetstream.subscribeEvents#info";

    /** v2 strings keep U+2028/U+2029 unescaped (decision 6). */
    private static final UpstreamBody.Strings LEX = JsonText::appendLexString;

    private final CborJson record = new CborJson();
    private final UpstreamBody body = new UpstreamBody();
    private final JsonText text = new JsonText();

    /**
     * Appends the message frame {@code {"$type":"message","payload":{...}}} for an event of any kind.
     * On a malformed payload {@code out} is left as it was and the {@link DecodeException} propagates.
     */
    public void writeMessage(WireEvent e, JsonBuffer out) {
        int mark = out.length();
        try {
            out.appendAscii("{\"$type\":\"message\",\"payload\":");
            writePayload(e, out);
            out.append((byte) '}');
        } catch (DecodeException ex) {
            out.setLength(mark);
            throw ex;
        }
    }

    /** Appends only the payload object (the lexicon message), without the frame envelope. */
    public void writePayload(WireEvent e, JsonBuffer out) {
        switch (e.kind()) {
            case ArchiveRow.KIND_IDENTITY -> identity(e, out);
            case ArchiveRow.KIND_ACCOUNT -> account(e, out);
            case ArchiveRow.KIND_SYNC -> sync(e, out);
            default -> commit(e, out);
        }
    }

    /** Appends an {@code #info} message frame; {@code message} may be null. */
    public static void writeInfo(String name, String message, JsonBuffer out) {
        out.appendAscii("{\"$type\":\"message\",\"payload\":{\"$type\":\"" + INFO + "\"");
        if (message != null && !message.isEmpty()) {
            out.appendAscii(",\"message\":");
            JsonText.appendLexString(message, out);
        }
        out.appendAscii(",\"name\":");
        JsonText.appendLexString(name, out);
        out.appendAscii("}}");
    }

    /** Appends a terminal error frame; {@code message} may be null or empty (then omitted). */
    public static void writeError(String error, String message, JsonBuffer out) {
        out.appendAscii("{\"$type\":\"error\",\"error\":");
        JsonText.appendLexString(error, out);
        if (message != null && !message.isEmpty()) {
            out.appendAscii(",\"message\":");
            JsonText.appendLexString(message, out);
        }
        out.append((byte) '}');
    }

    private void commit(WireEvent e, JsonBuffer out) {
        boolean hasRecord = e.kind() != ArchiveRow.KIND_DELETE;
        out.appendAscii("{\"$type\":\"" + COMMIT + "\"");
        if (hasRecord) {
            out.appendAscii(",\"cid\":");
            text.appendRecordCid(e.payload(), e.payloadOffset(), e.payloadLength(), out);
        }
        out.appendAscii(",\"collection\":");
        JsonText.appendLexString(e.collection(), out);
        out.appendAscii(",\"did\":");
        JsonText.appendLexString(e.did(), out);
        out.appendAscii(switch (e.kind()) {
            case ArchiveRow.KIND_UPDATE -> ",\"operation\":\"update\"";
            case ArchiveRow.KIND_DELETE -> ",\"operation\":\"delete\"";
            default -> ",\"operation\":\"create\"";
        });
        if (hasRecord) {
            out.appendAscii(",\"record\":");
            record.writeRecord(e.payload(), e.payloadOffset(), e.payloadLength(), out);
        }
        out.appendAscii(",\"rev\":");
        JsonText.appendLexString(e.rev(), out);
        out.appendAscii(",\"rkey\":");
        JsonText.appendLexString(e.rkey(), out);
        seqAndTime(e, out);
    }

    private void identity(WireEvent e, JsonBuffer out) {
        body.parse(e.payload(), e.payloadOffset(), e.payloadLength());
        out.appendAscii("{\"$type\":\"" + IDENTITY + "\",\"did\":");
        JsonText.appendLexString(e.did(), out);
        out.appendAscii(",\"identity\":");
        body.writeIdentity(out, LEX);
        seqAndTime(e, out);
    }

    private void account(WireEvent e, JsonBuffer out) {
        body.parse(e.payload(), e.payloadOffset(), e.payloadLength());
        out.appendAscii("{\"$type\":\"" + ACCOUNT + "\",\"account\":");
        body.writeAccount(out, LEX);
        out.appendAscii(",\"did\":");
        JsonText.appendLexString(e.did(), out);
        seqAndTime(e, out);
    }

    private void sync(WireEvent e, JsonBuffer out) {
        body.parse(e.payload(), e.payloadOffset(), e.payloadLength());
        out.appendAscii("{\"$type\":\"" + SYNC + "\",\"did\":");
        JsonText.appendLexString(e.did(), out);
        out.appendAscii(",\"seq\":");
        out.appendLong(e.seq());
        out.appendAscii(",\"sync\":{");
        body.type(out, LEX);
        out.appendAscii("\"blocks\":{\"$bytes\":\"");
        if (body.blocksOff >= 0) {
            out.appendBase64(body.src, body.blocksOff, body.blocksLen);
        }
        out.appendAscii("\"}");
        body.field(out, LEX, ",\"did\":", body.didOff, body.didLen);
        body.field(out, LEX, ",\"rev\":", body.revOff, body.revLen);
        out.appendAscii(",\"seq\":");
        out.appendLong(body.seq);
        body.field(out, LEX, ",\"time\":", body.timeOff, body.timeLen);
        out.appendAscii("},\"time\":");
        JsonText.appendMicrosTime(e.timeMicros(), out);
        out.append((byte) '}');
    }

    private static void seqAndTime(WireEvent e, JsonBuffer out) {
        out.appendAscii(",\"seq\":");
        out.appendLong(e.seq());
        out.appendAscii(",\"time\":");
        JsonText.appendMicrosTime(e.timeMicros(), out);
        out.append((byte) '}');
    }
}
