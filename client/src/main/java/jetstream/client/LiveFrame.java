package jetstream.client;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import jetstream.wire.V2Json;

/**
 * One parsed v2 {@code subscribeEvents} frame (docs/wire.md: v2 framing, v2 payloads): an event message, an
 * {@code #info} message, an unknown message type (skipped for forward compatibility), or a terminal
 * error frame. The event's payload object is kept as the exact bytes the server sent.
 */
record LiveFrame(Event event, String errorName, String message, boolean info) {

    static LiveFrame parse(byte[] text) {
        try (JsonParser p = XrpcCalls.JSON.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new JetstreamException("live frame is not a JSON object");
            }
            String type = null;
            String error = null;
            String message = null;
            Event event = null;
            boolean info = false;
            boolean unknown = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String k = p.currentName();
                JsonToken t = p.nextToken();
                switch (k) {
                    case "$type" -> type = p.getText();
                    case "error" -> error = p.getText();
                    case "message" -> message = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    case "payload" -> {
                        if (t != JsonToken.START_OBJECT) {
                            throw new JetstreamException("live frame payload is not an object");
                        }
                        int start = (int) p.currentTokenLocation().getByteOffset();
                        Payload pl = payload(p);
                        int end = (int) p.currentLocation().getByteOffset();
                        if (pl.type == null) {
                            throw new JetstreamException("live payload without $type");
                        }
                        if (pl.type.equals(V2Json.INFO)) {
                            info = true;
                            message = pl.message;
                        } else if (pl.kind == 0) {
                            unknown = true;
                        } else {
                            event = pl.toEvent(Arrays.copyOfRange(text, start, end), start);
                        }
                    }
                    default -> p.skipChildren();
                }
            }
            if ("error".equals(type)) {
                return new LiveFrame(null, error == null ? "UnknownError" : error, message, false);
            }
            if (!"message".equals(type)) {
                throw new JetstreamException("live frame with $type " + type);
            }
            if (info || unknown) {
                return new LiveFrame(null, null, message, info);
            }
            if (event == null) {
                throw new JetstreamException("live message without payload");
            }
            return new LiveFrame(event, null, null, false);
        } catch (IOException e) {
            throw new JetstreamException("live frame is not valid JSON: " + e.getMessage(), e);
        }
    }

    private static final class Payload {
        String type;
        int kind;
        String did = "";
        String collection = "";
        String rkey = "";
        String rev = "";
        String cid;
        String message;
        long seq = -1;
        long time;
        int recordStart = -1;
        int recordEnd = -1;

        Event toEvent(byte[] json, int base) {
            if (seq < 0) {
                throw new JetstreamException("live event without seq");
            }
            int ro = recordStart < 0 ? -1 : recordStart - base;
            int rl = recordStart < 0 ? 0 : recordEnd - recordStart;
            if ((kind == 1 || kind == 2) && ro < 0) {
                throw new JetstreamException("live " + (kind == 1 ? "create" : "update") + " without record");
            }
            return Event.live(seq, time, kind, did, collection, rkey, rev, json, ro, rl, cid);
        }
    }

    private static Payload payload(JsonParser p) throws IOException {
        Payload pl = new Payload();
        String operation = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String k = p.currentName();
            JsonToken t = p.nextToken();
            switch (k) {
                case "$type" -> pl.type = p.getText();
                case "did" -> pl.did = p.getText();
                case "collection" -> pl.collection = p.getText();
                case "rkey" -> pl.rkey = p.getText();
                case "rev" -> pl.rev = p.getText();
                case "cid" -> pl.cid = p.getText();
                case "operation" -> operation = p.getText();
                case "message" -> pl.message = p.getText();
                case "seq" -> pl.seq = p.getLongValue();
                case "time" -> pl.time = micros(p.getText());
                case "record" -> {
                    pl.recordStart = (int) p.currentTokenLocation().getByteOffset();
                    p.skipChildren();
                    pl.recordEnd = (int) p.currentLocation().getByteOffset();
                }
                default -> p.skipChildren();
            }
        }
        if (pl.type != null) {
            pl.kind = switch (pl.type) {
                case V2Json.COMMIT -> operation == null ? 0 : switch (operation) {
                    case "create" -> 1;
                    case "update" -> 2;
                    case "delete" -> 3;
                    default -> 0;
                };
                case V2Json.IDENTITY -> 4;
                case V2Json.ACCOUNT -> 5;
                case V2Json.SYNC -> 6;
                default -> 0;
            };
        }
        return pl;
    }

    private static long micros(String time) {
        try {
            Instant i = Instant.parse(time);
            return i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
        } catch (DateTimeParseException e) {
            throw new JetstreamException("live event time '" + time + "' is not RFC 3339");
        }
    }
}
