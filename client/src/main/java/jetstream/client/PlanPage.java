package jetstream.client;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import jetstream.segment.io.SegmentName;

/**
 * One planSnapshot response (docs/http-api.md: planSnapshot), parsed and validated the way the Go client validates a
 * server plan (docs/client.md: Archive, then live): a plan that breaks these rules is a fatal error, never guessed around.
 */
public record PlanPage(long plannedThroughSeq, long sealedTipSeq, List<Entry> segments, long blocksMatched,
                       long entries, long segmentsExamined, long segmentsMatched) {

    /** One segment of the plan; {@code ranges} holds inclusive {@code {first, last}} pairs, empty in segment mode. */
    public record Entry(String name, long index, String checksum, long minSeq, long maxSeq, boolean wholeSegment,
                        List<long[]> ranges) {
        /** Work units this entry expands to (one per whole segment, one per block otherwise). */
        public long blocks() {
            long n = 0;
            for (long[] r : ranges) {
                n += r[1] - r[0] + 1;
            }
            return n;
        }
    }

    static PlanPage parse(byte[] body) {
        long planned = -1;
        long tip = -1;
        List<Entry> segs = null;
        long[] stats = new long[4];
        try (JsonParser p = XrpcCalls.JSON.createParser(body)) {
            expect(p.nextToken() == JsonToken.START_OBJECT, "plan is not a JSON object");
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String k = p.currentName();
                JsonToken t = p.nextToken();
                switch (k) {
                    case "plannedThroughSeq" -> planned = integer(p, t, k);
                    case "sealedTipSeq" -> tip = integer(p, t, k);
                    case "segments" -> segs = segments(p, t);
                    case "stats" -> stats(p, t, stats);
                    default -> p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new JetstreamException("invalid plan: " + e.getMessage(), e);
        }
        expect(planned >= 0 && tip >= 0, "plan lacks plannedThroughSeq/sealedTipSeq or they are negative");
        expect(planned <= tip, "plannedThroughSeq " + planned + " is above sealedTipSeq " + tip);
        return new PlanPage(planned, tip, segs == null ? List.of() : segs, stats[0], stats[1], stats[2], stats[3]);
    }

    private static List<Entry> segments(JsonParser p, JsonToken t) throws IOException {
        expect(t == JsonToken.START_ARRAY, "plan segments is not an array");
        List<Entry> out = new ArrayList<>();
        while (p.nextToken() == JsonToken.START_OBJECT) {
            String name = null;
            String checksum = "";
            String mode = null;
            long index = -1;
            long min = -1;
            long max = -1;
            List<long[]> ranges = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String k = p.currentName();
                JsonToken v = p.nextToken();
                switch (k) {
                    case "name" -> name = string(p, v, k);
                    case "checksum" -> checksum = string(p, v, k);
                    case "mode" -> mode = string(p, v, k);
                    case "index" -> index = integer(p, v, k);
                    case "minSeq" -> min = integer(p, v, k);
                    case "maxSeq" -> max = integer(p, v, k);
                    case "blocks" -> ranges = ranges(p, v);
                    default -> p.skipChildren();
                }
            }
            expect(name != null, "plan entry without a name");
            expect(SegmentName.parse(name) >= 0, "plan entry has a malformed segment name: " + name);
            expect(index >= 0 && index <= 0xFFFF_FFFFL, "plan entry " + name + " has index " + index + " outside uint32");
            expect(min >= 0 && max >= 0, "plan entry " + name + " has negative seqs");
            expect(min <= max, "plan entry " + name + " has inverted seq range " + min + ".." + max);
            boolean whole;
            if ("segment".equals(mode)) {
                whole = true;
                ranges = List.of();
            } else if ("blocks".equals(mode)) {
                whole = false;
                expect(ranges != null && !ranges.isEmpty(), "plan entry " + name + " in blocks mode has no ranges");
            } else {
                throw new JetstreamException("plan entry " + name + " has unknown mode " + mode);
            }
            out.add(new Entry(name, index, checksum, min, max, whole, List.copyOf(ranges)));
        }
        return out;
    }

    private static List<long[]> ranges(JsonParser p, JsonToken t) throws IOException {
        expect(t == JsonToken.START_ARRAY, "plan blocks is not an array");
        List<long[]> out = new ArrayList<>();
        while (p.nextToken() == JsonToken.START_OBJECT) {
            long first = -1;
            long last = -1;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String k = p.currentName();
                JsonToken v = p.nextToken();
                switch (k) {
                    case "first" -> first = integer(p, v, k);
                    case "last" -> last = integer(p, v, k);
                    default -> p.skipChildren();
                }
            }
            expect(first >= 0 && last >= 0, "plan block range has negative bounds");
            expect(first <= last && last <= Integer.MAX_VALUE, "plan block range " + first + ".." + last + " is inverted");
            out.add(new long[] {first, last});
        }
        return out;
    }

    private static void stats(JsonParser p, JsonToken t, long[] stats) throws IOException {
        expect(t == JsonToken.START_OBJECT, "plan stats is not an object");
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String k = p.currentName();
            JsonToken v = p.nextToken();
            switch (k) {
                case "blocksMatched" -> stats[0] = integer(p, v, k);
                case "entries" -> stats[1] = integer(p, v, k);
                case "segmentsExamined" -> stats[2] = integer(p, v, k);
                case "segmentsMatched" -> stats[3] = integer(p, v, k);
                default -> p.skipChildren();
            }
        }
    }

    private static long integer(JsonParser p, JsonToken t, String key) throws IOException {
        expect(t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER,
                "plan field " + key + " is not an integer");
        return p.getLongValue();
    }

    private static String string(JsonParser p, JsonToken t, String key) throws IOException {
        expect(t == JsonToken.VALUE_STRING, "plan field " + key + " is not a string");
        return p.getText();
    }

    private static void expect(boolean ok, String message) {
        if (!ok) {
            throw new JetstreamException("invalid plan: " + message);
        }
    }
}
