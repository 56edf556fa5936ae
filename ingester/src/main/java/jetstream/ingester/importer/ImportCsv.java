package jetstream.ingester.importer;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;
import jetstream.atproto.syntax.RecordKey;

/**
 * The operator's timestamp CSV (docs/http-api.md: The CSV, Timestamp import), read as a stream of bytes so every record's
 * byte offset is known and a record can be read again by seeking to it. Memory is bounded: one
 * read window and one record of at most {@link #MAX_ROW_BYTES}. Quoting follows RFC 4180; a bare
 * quote (inside an unquoted field), text after a closing quote, or a quote still open at the end
 * of the file make the rest unparseable and abort the file ({@link Abort}); other bad rows are
 * rejected one by one with a reason.
 */
public final class ImportCsv implements Closeable {
    /** Longest accepted record in bytes; longer ones are rejected as {@code row_too_long}. */
    public static final int MAX_ROW_BYTES = 16 * 1024;

    /** Every per-row reject reason, in the order the checks run. */
    public static final List<String> REJECT_REASONS = List.of("row_too_long", "malformed_csv", "missing_field",
            "bad_uri", "uri_authority_not_did", "uri_missing_collection_or_rkey", "bad_timestamp",
            "non_positive_timestamp", "unknown_scope", "specific_version_missing_cid", "bad_cid");

    /** The whole file is unusable (bad header, unclosed or bare quote). */
    public static final class Abort extends Exception {
        public Abort(String message) {
            super(message);
        }
    }

    /**
     * A valid row. {@code cid} is the canonical CID string for {@code specific_version}, null for
     * {@code all_versions}.
     */
    public record Row(long offset, String did, String collection, String rkey, long timestampMicros, String cid) {
        public boolean specific() {
            return cid != null;
        }
    }

    /** One record read: a valid row, or the reason it was rejected. */
    public record Parsed(long offset, Row row, String reject) {}

    private static final int WINDOW = 64 * 1024;
    private static final int URI = 0;
    private static final int TIMESTAMP = 1;
    private static final int SCOPE = 2;
    private static final int CID = 3;

    private final Path path;
    private final FileChannel ch;
    private final ByteBuffer window = ByteBuffer.allocate(WINDOW);
    private long windowStart;
    private boolean eof;
    /** Column index of uri, timestamp, scope, cid in the header (-1 when absent). */
    private final int[] columns = {-1, -1, -1, -1};
    private int width;
    private final byte[] rowBytes = new byte[MAX_ROW_BYTES];
    private final int[] fieldStart = new int[MAX_ROW_BYTES + 1];
    private final int[] fieldEnd = new int[MAX_ROW_BYTES + 1];

    private ImportCsv(Path path, FileChannel ch) {
        this.path = path;
        this.ch = ch;
        window.limit(0);
    }

    /** Opens {@code path} and reads its header. */
    public static ImportCsv open(Path path) throws IOException, Abort {
        ImportCsv csv = new ImportCsv(path, FileChannel.open(path, StandardOpenOption.READ));
        try {
            csv.readHeader();
            return csv;
        } catch (IOException | Abort | RuntimeException e) {
            csv.close();
            throw e;
        }
    }

    /** Byte offset just after the header; data records start here. */
    private long dataStart;

    public long dataStart() {
        return dataStart;
    }

    private void readHeader() throws IOException, Abort {
        long start = 0;
        if (peek() == 0xEF) {
            // a UTF-8 byte order mark some spreadsheet tools write
            byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
            boolean isBom = true;
            for (int i = 0; i < 3; i++) {
                if (nextByte() != (bom[i] & 0xFF)) {
                    isBom = false;
                }
            }
            start = isBom ? 3 : 0;
            seek(start);
        }
        Record r = new Record();
        if (!readRecord(r)) {
            throw new Abort(path.getFileName() + ": empty file, the header row uri,timestamp[,scope][,cid] is required");
        }
        if (r.tooLong) {
            throw new Abort("header row longer than " + MAX_ROW_BYTES + " bytes");
        }
        width = r.fields;
        for (int i = 0; i < r.fields; i++) {
            String name = field(i);
            int c = switch (name) {
                case "uri" -> URI;
                case "timestamp" -> TIMESTAMP;
                case "scope" -> SCOPE;
                case "cid" -> CID;
                default -> throw new Abort("unknown header column \"" + name + "\" (allowed: uri, timestamp, scope, cid)");
            };
            if (columns[c] >= 0) {
                throw new Abort("duplicate header column \"" + name + "\"");
            }
            columns[c] = i;
        }
        if (columns[URI] < 0 || columns[TIMESTAMP] < 0) {
            throw new Abort("the header must name the columns uri and timestamp");
        }
        dataStart = position();
    }

    /**
     * Reads the next data record (empty lines are skipped); null at the end of the file.
     *
     * @throws Abort on an unclosed or bare quote
     */
    public Parsed next() throws IOException, Abort {
        Record r = new Record();
        if (!readRecord(r)) {
            return null;
        }
        return validate(r);
    }

    /**
     * Reads the record at byte {@code offset} again (a bucketed row): seeks there and parses one
     * record. Null when nothing parses there, for example because the file changed.
     */
    public Parsed readAt(long offset) throws IOException {
        seek(offset);
        Record r = new Record();
        try {
            if (!readRecord(r) || r.offset != offset) {
                return null;
            }
        } catch (Abort e) {
            return null;
        }
        return validate(r);
    }

    private final class Record {
        long offset;
        int fields;
        int length;
        boolean tooLong;
    }

    private String field(int i) {
        return new String(rowBytes, fieldStart[i], fieldEnd[i] - fieldStart[i], StandardCharsets.UTF_8);
    }

    /** Parses one record into {@link #rowBytes}; false at end of file. */
    private boolean readRecord(Record r) throws IOException, Abort {
        int c = nextByte();
        while (c == '\n' || c == '\r') {
            c = nextByte();
        }
        if (c < 0) {
            return false;
        }
        r.offset = position() - 1;
        r.fields = 0;
        r.length = 0;
        r.tooLong = false;
        while (true) {
            if (r.fields < fieldStart.length) {
                fieldStart[r.fields] = r.length;
            }
            boolean endOfRecord;
            if (c == '"') {
                while (true) {
                    c = nextByte();
                    if (c < 0) {
                        throw new Abort("unclosed quote in the record at byte " + r.offset);
                    }
                    if (c == '"') {
                        c = nextByte();
                        if (c != '"') {
                            break;
                        }
                    }
                    put(r, c);
                }
                if (c != ',' && c != '\n' && c != '\r' && c >= 0) {
                    throw new Abort("text after a closing quote in the record at byte " + r.offset);
                }
            } else {
                while (c >= 0 && c != ',' && c != '\n' && c != '\r') {
                    if (c == '"') {
                        throw new Abort("bare quote in an unquoted field of the record at byte " + r.offset);
                    }
                    put(r, c);
                    c = nextByte();
                }
            }
            if (r.fields < fieldEnd.length) {
                fieldEnd[r.fields] = r.length;
            }
            r.fields++;
            endOfRecord = c != ',';
            if (c == '\r') {
                c = nextByte();
                if (c != '\n' && c >= 0) {
                    unread();
                }
            }
            if (endOfRecord) {
                return true;
            }
            c = nextByte();
        }
    }

    private void put(Record r, int c) {
        if (r.length < MAX_ROW_BYTES) {
            rowBytes[r.length++] = (byte) c;
        } else {
            r.tooLong = true;
        }
    }

    private Parsed validate(Record r) {
        long off = r.offset;
        if (r.tooLong) {
            return reject(off, "row_too_long");
        }
        if (r.fields != width) {
            return reject(off, "malformed_csv");
        }
        String uri = field(columns[URI]);
        String ts = field(columns[TIMESTAMP]);
        if (uri.isEmpty() || ts.isEmpty()) {
            return reject(off, "missing_field");
        }
        if (!uri.startsWith("at://")) {
            return reject(off, "bad_uri");
        }
        String rest = uri.substring(5);
        if (rest.indexOf('?') >= 0 || rest.indexOf('#') >= 0) {
            return reject(off, "bad_uri");
        }
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        if (!authority.startsWith("did:")) {
            return reject(off, "uri_authority_not_did");
        }
        if (!Did.isValid(authority)) {
            return reject(off, "bad_uri");
        }
        String path = slash < 0 ? "" : rest.substring(slash + 1);
        int slash2 = path.indexOf('/');
        if (slash2 <= 0 || slash2 == path.length() - 1) {
            return reject(off, "uri_missing_collection_or_rkey");
        }
        String collection = path.substring(0, slash2);
        String rkey = path.substring(slash2 + 1);
        if (rkey.indexOf('/') >= 0 || !Nsid.isValid(collection) || !RecordKey.isValid(rkey)) {
            return reject(off, "bad_uri");
        }
        long micros;
        try {
            OffsetDateTime t = OffsetDateTime.parse(ts, DateTimeFormatter.ISO_OFFSET_DATE_TIME);
            micros = Math.addExact(Math.multiplyExact(t.toEpochSecond(), 1_000_000L), t.getNano() / 1000);
        } catch (DateTimeParseException | ArithmeticException e) {
            return reject(off, "bad_timestamp");
        }
        if (micros <= 0) {
            return reject(off, "non_positive_timestamp");
        }
        String scope = columns[SCOPE] < 0 ? "" : field(columns[SCOPE]);
        if (scope.isEmpty() || scope.equals("all_versions")) {
            return new Parsed(off, new Row(off, authority, collection, rkey, micros, null), null);
        }
        if (!scope.equals("specific_version")) {
            return reject(off, "unknown_scope");
        }
        String cid = columns[CID] < 0 ? "" : field(columns[CID]);
        if (cid.isEmpty()) {
            return reject(off, "specific_version_missing_cid");
        }
        String canonical = canonicalRecordCid(cid);
        if (canonical == null) {
            return reject(off, "bad_cid");
        }
        return new Parsed(off, new Row(off, authority, collection, rkey, micros, canonical), null);
    }

    /** A record CID (v1, dag-cbor, sha2-256) in its canonical base32 form; null for anything else. */
    static String canonicalRecordCid(String s) {
        try {
            Cid c = Cid.parse(s);
            if (c.version() != 1 || c.codec() != Cid.CODEC_DAG_CBOR || c.multihashCode() != Cid.HASH_SHA2_256) {
                return null;
            }
            return c.toString();
        } catch (DecodeException | IllegalArgumentException e) {
            return null;
        }
    }

    private static Parsed reject(long offset, String reason) {
        return new Parsed(offset, null, reason);
    }

    // --- the read window over the file ---

    private long position() {
        return windowStart + window.position();
    }

    private void seek(long offset) throws IOException {
        if (offset >= windowStart && offset <= windowStart + window.limit()) {
            window.position((int) (offset - windowStart));
            eof = false;
            return;
        }
        windowStart = offset;
        window.clear().limit(0);
        eof = false;
    }

    private int peek() throws IOException {
        int c = nextByte();
        if (c >= 0) {
            unread();
        }
        return c;
    }

    private void unread() {
        window.position(window.position() - 1);
    }

    private int nextByte() throws IOException {
        if (!window.hasRemaining()) {
            if (eof || !fill()) {
                return -1;
            }
        }
        return window.get() & 0xFF;
    }

    /** Slides the window to the current position and reads more; keeps one byte back for {@link #unread}. */
    private boolean fill() throws IOException {
        long pos = position();
        int keep = window.position() > 0 ? 1 : 0;
        byte last = keep == 1 ? window.get(window.position() - 1) : 0;
        window.clear();
        if (keep == 1) {
            window.put(last);
        }
        windowStart = pos - keep;
        int n = ch.read(window, windowStart + keep);
        if (n <= 0) {
            window.flip();
            window.position(keep);
            eof = true;
            return false;
        }
        window.flip();
        window.position(keep);
        return true;
    }

    /** The file's size now (for progress). */
    public long size() throws IOException {
        return ch.size();
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
