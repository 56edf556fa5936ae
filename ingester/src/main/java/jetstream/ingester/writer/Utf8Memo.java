package jetstream.ingester.writer;

import java.nio.charset.StandardCharsets;

/**
 * The UTF-8 bytes of the last string asked for, kept for the next row: a repository's rows share
 * their DID and rev, and runs of them their collection, so the writer encodes each once per run.
 * The bytes are shared by the rows that reuse them and must not be modified.
 */
final class Utf8Memo {
    private String last;
    private byte[] bytes;

    byte[] of(String s) {
        if (!s.equals(last)) {
            bytes = s.getBytes(StandardCharsets.UTF_8);
            last = s;
        }
        return bytes;
    }
}
