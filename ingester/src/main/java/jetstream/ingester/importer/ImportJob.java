package jetstream.ingester.importer;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.TreeMap;
import jetstream.atproto.json.JsonBuffer;

/**
 * One timestamp-import job's record: stored at {@code import/job/<id>/meta} (docs/http-api.md: Timestamp import keys) and
 * rendered as the getImportStatus output. Mutated only by the job's thread; readers get
 * {@link #copy()}s.
 */
public final class ImportJob {
    public static final String RUNNING = "running";
    public static final String COMPLETE = "complete";
    public static final String FAILED = "failed";
    public static final String PARSE_BUCKET = "parse_bucket";
    public static final String APPLY = "apply";
    private static final DateTimeFormatter MILLIS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    String id;
    String csvPath;
    String state = RUNNING;
    String phase = "";
    String error = "";
    Instant submittedAt;
    Instant finishedAt;
    boolean bucketed;
    long segmentsToApply;
    long segmentsApplied;
    long rowsTotal;
    long rowsValid;
    long rowsRejected;
    final Map<String, Long> rejectsByReason = new TreeMap<>();
    long segmentsExamined;
    long segmentsPatched;
    long rowsMutated;
    long rowsMatchedAllVersions;
    long rowsMatchedSpecific;
    long specificCidsUnmatched;
    long rowsCorruptOffset;

    public String id() {
        return id;
    }

    public String state() {
        return state;
    }

    public String phase() {
        return phase;
    }

    public String error() {
        return error;
    }

    public boolean bucketed() {
        return bucketed;
    }

    public long rowsTotal() {
        return rowsTotal;
    }

    public long rowsValid() {
        return rowsValid;
    }

    public long rowsRejected() {
        return rowsRejected;
    }

    public Map<String, Long> rejectsByReason() {
        return rejectsByReason;
    }

    public long segmentsToApply() {
        return segmentsToApply;
    }

    public long segmentsApplied() {
        return segmentsApplied;
    }

    public long segmentsExamined() {
        return segmentsExamined;
    }

    public long segmentsPatched() {
        return segmentsPatched;
    }

    public long rowsMutated() {
        return rowsMutated;
    }

    public long rowsMatchedAllVersions() {
        return rowsMatchedAllVersions;
    }

    public long rowsMatchedSpecific() {
        return rowsMatchedSpecific;
    }

    public long specificCidsUnmatched() {
        return specificCidsUnmatched;
    }

    public long rowsCorruptOffset() {
        return rowsCorruptOffset;
    }

    public String csvPath() {
        return csvPath;
    }

    static String metaKey(String id) {
        return "import/job/" + id + "/meta";
    }

    /** Clears the parse results before a parse pass starts (again, on resume). */
    void resetParse() {
        rowsTotal = rowsValid = rowsRejected = 0;
        rejectsByReason.clear();
        segmentsToApply = segmentsApplied = segmentsExamined = segmentsPatched = 0;
        rowsMutated = rowsMatchedAllVersions = rowsMatchedSpecific = specificCidsUnmatched = rowsCorruptOffset = 0;
        bucketed = false;
    }

    synchronized ImportJob copy() {
        return decode(encode());
    }

    /** The stored record (Go field names, docs/http-api.md: Timestamp import). */
    synchronized byte[] encode() {
        JsonBuffer b = new JsonBuffer(512);
        b.appendAscii("{\"id\":").appendString(id);
        b.appendAscii(",\"csvPath\":").appendString(csvPath);
        b.appendAscii(",\"state\":").appendString(state);
        if (!phase.isEmpty()) {
            b.appendAscii(",\"phase\":").appendString(phase);
        }
        if (!error.isEmpty()) {
            b.appendAscii(",\"error\":").appendString(error);
        }
        b.appendAscii(",\"submittedAt\":").appendString(submittedAt.toString());
        if (finishedAt != null) {
            b.appendAscii(",\"finishedAt\":").appendString(finishedAt.toString());
        }
        b.appendAscii(",\"bucketed\":").appendBoolean(bucketed);
        b.appendAscii(",\"segmentsToApply\":").appendLong(segmentsToApply);
        b.appendAscii(",\"segmentsApplied\":").appendLong(segmentsApplied);
        b.appendAscii(",\"rowsTotal\":").appendLong(rowsTotal);
        b.appendAscii(",\"rowsValid\":").appendLong(rowsValid);
        b.appendAscii(",\"rowsRejected\":").appendLong(rowsRejected);
        if (!rejectsByReason.isEmpty()) {
            b.appendAscii(",\"rejectsByReason\":{");
            boolean first = true;
            for (Map.Entry<String, Long> e : rejectsByReason.entrySet()) {
                if (!first) {
                    b.append((byte) ',');
                }
                first = false;
                b.appendString(e.getKey()).append((byte) ':').appendLong(e.getValue());
            }
            b.append((byte) '}');
        }
        b.appendAscii(",\"segmentsExamined\":").appendLong(segmentsExamined);
        b.appendAscii(",\"segmentsPatched\":").appendLong(segmentsPatched);
        b.appendAscii(",\"rowsMutated\":").appendLong(rowsMutated);
        b.appendAscii(",\"rowsMatchedAllVersions\":").appendLong(rowsMatchedAllVersions);
        b.appendAscii(",\"rowsMatchedSpecific\":").appendLong(rowsMatchedSpecific);
        b.appendAscii(",\"specificCidsUnmatched\":").appendLong(specificCidsUnmatched);
        b.appendAscii(",\"rowsCorruptOffset\":").appendLong(rowsCorruptOffset);
        b.append((byte) '}');
        return b.toByteArray();
    }

    /** Parses a stored record. */
    public static ImportJob decode(byte[] stored) {
        JsonObject o = new JsonObject(new String(stored, StandardCharsets.UTF_8));
        ImportJob j = new ImportJob();
        j.id = o.getString("id");
        j.csvPath = o.getString("csvPath");
        j.state = o.getString("state");
        j.phase = o.getString("phase", "");
        j.error = o.getString("error", "");
        j.submittedAt = Instant.parse(o.getString("submittedAt"));
        String fin = o.getString("finishedAt");
        j.finishedAt = fin == null ? null : Instant.parse(fin);
        j.bucketed = o.getBoolean("bucketed", false);
        j.segmentsToApply = o.getLong("segmentsToApply", 0L);
        j.segmentsApplied = o.getLong("segmentsApplied", 0L);
        j.rowsTotal = o.getLong("rowsTotal", 0L);
        j.rowsValid = o.getLong("rowsValid", 0L);
        j.rowsRejected = o.getLong("rowsRejected", 0L);
        JsonObject reasons = o.getJsonObject("rejectsByReason");
        if (reasons != null) {
            for (String k : reasons.fieldNames()) {
                j.rejectsByReason.put(k, reasons.getLong(k));
            }
        }
        j.segmentsExamined = o.getLong("segmentsExamined", 0L);
        j.segmentsPatched = o.getLong("segmentsPatched", 0L);
        j.rowsMutated = o.getLong("rowsMutated", 0L);
        j.rowsMatchedAllVersions = o.getLong("rowsMatchedAllVersions", 0L);
        j.rowsMatchedSpecific = o.getLong("rowsMatchedSpecific", 0L);
        j.specificCidsUnmatched = o.getLong("specificCidsUnmatched", 0L);
        j.rowsCorruptOffset = o.getLong("rowsCorruptOffset", 0L);
        return j;
    }

    /** The getImportStatus output: keys in the order of docs/http-api.md: Timestamp import, counters always present. */
    public synchronized byte[] statusJson() {
        JsonBuffer b = new JsonBuffer(512);
        b.appendAscii("{\"bucketed\":").appendBoolean(bucketed);
        if (!error.isEmpty()) {
            b.appendAscii(",\"error\":").appendString(error);
        }
        if (finishedAt != null) {
            b.appendAscii(",\"finishedAt\":").appendString(MILLIS.format(finishedAt));
        }
        b.appendAscii(",\"job\":").appendString(id);
        if (!phase.isEmpty()) {
            b.appendAscii(",\"phase\":").appendString(phase);
        }
        b.appendAscii(",\"rowsCorruptOffset\":").appendLong(rowsCorruptOffset);
        b.appendAscii(",\"rowsMatchedAllVersions\":").appendLong(rowsMatchedAllVersions);
        b.appendAscii(",\"rowsMatchedSpecific\":").appendLong(rowsMatchedSpecific);
        b.appendAscii(",\"rowsMutated\":").appendLong(rowsMutated);
        b.appendAscii(",\"rowsRejected\":").appendLong(rowsRejected);
        b.appendAscii(",\"rowsTotal\":").appendLong(rowsTotal);
        b.appendAscii(",\"rowsValid\":").appendLong(rowsValid);
        b.appendAscii(",\"segmentsApplied\":").appendLong(segmentsApplied);
        b.appendAscii(",\"segmentsExamined\":").appendLong(segmentsExamined);
        b.appendAscii(",\"segmentsPatched\":").appendLong(segmentsPatched);
        b.appendAscii(",\"segmentsToApply\":").appendLong(segmentsToApply);
        b.appendAscii(",\"specificCidsUnmatched\":").appendLong(specificCidsUnmatched);
        b.appendAscii(",\"state\":").appendString(state);
        b.appendAscii(",\"submittedAt\":").appendString(MILLIS.format(submittedAt));
        b.append((byte) '}');
        return b.toByteArray();
    }
}
