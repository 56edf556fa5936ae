package jetstream.planner;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.json.JsonBuffer;

/**
 * planSnapshot's JSON input (typed like the generated Go struct) and output (docs/http-api.md: planSnapshot key order),
 * for the archive-server and the client tests' stand-in server.
 */
public final class PlanJson {
    private static final JsonFactory JSON = new JsonFactory();

    private PlanJson() {}

    /**
     * Decodes the body into a validated filter.
     *
     * @throws PlanRequestException "invalid request body" for anything that is not a JSON object of
     *     the declared member types, or the rule a valid body violates
     */
    public static PlanFilter parse(byte[] body, PlanLimits limits) {
        List<String> kinds = null;
        List<String> dids = null;
        List<String> collections = null;
        Long after = null;
        Long before = null;
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw bad();
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                JsonToken t = p.nextToken();
                switch (key) {
                    case "kinds" -> kinds = strings(p, t);
                    case "dids" -> dids = strings(p, t);
                    case "collections" -> collections = strings(p, t);
                    case "afterSeq" -> after = integer(p, t);
                    case "beforeSeq" -> before = integer(p, t);
                    default -> p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw bad();
            }
        } catch (IOException e) {
            throw bad();
        }
        return PlanFilter.parse(kinds, dids, collections, after, before, limits);
    }

    private static List<String> strings(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_ARRAY) {
            throw bad();
        }
        List<String> out = new ArrayList<>();
        for (JsonToken x = p.nextToken(); x != JsonToken.END_ARRAY; x = p.nextToken()) {
            if (x != JsonToken.VALUE_STRING) {
                throw bad();
            }
            out.add(p.getText());
        }
        return out;
    }

    private static Long integer(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw bad();
        }
        return p.getLongValue();
    }

    private static PlanRequestException bad() {
        return new PlanRequestException("invalid request body");
    }

    public static JsonBuffer write(Plan plan) {
        JsonBuffer b = new JsonBuffer(256 + plan.segments().size() * 160);
        b.appendAscii("{\"plannedThroughSeq\":").appendLong(plan.plannedThroughSeq());
        b.appendAscii(",\"sealedTipSeq\":").appendLong(plan.sealedTipSeq());
        b.appendAscii(",\"segments\":[");
        boolean first = true;
        for (Plan.Entry e : plan.segments()) {
            b.appendAscii(first ? "{" : ",{");
            first = false;
            if (!e.wholeSegment()) {
                b.appendAscii("\"blocks\":[");
                boolean fr = true;
                for (int[] r : e.ranges()) {
                    b.appendAscii(fr ? "{\"first\":" : ",{\"first\":").appendLong(r[0]);
                    b.appendAscii(",\"last\":").appendLong(r[1]).append((byte) '}');
                    fr = false;
                }
                b.appendAscii("],");
            }
            b.appendAscii("\"checksum\":").appendString(e.segment().checksumHex());
            b.appendAscii(",\"index\":").appendLong(e.segment().index());
            b.appendAscii(",\"maxSeq\":").appendLong(e.segment().maxSeq());
            b.appendAscii(",\"minSeq\":").appendLong(e.segment().minSeq());
            b.appendAscii(",\"mode\":").appendString(e.wholeSegment() ? "segment" : "blocks");
            b.appendAscii(",\"name\":").appendString(e.segment().name());
            b.append((byte) '}');
        }
        Plan.Stats s = plan.stats();
        b.appendAscii("],\"stats\":{\"blocksMatched\":").appendLong(s.blocksMatched());
        b.appendAscii(",\"entries\":").appendLong(s.entries());
        b.appendAscii(",\"segmentsExamined\":").appendLong(s.segmentsExamined());
        b.appendAscii(",\"segmentsMatched\":").appendLong(s.segmentsMatched());
        b.appendAscii("}}");
        return b;
    }
}
