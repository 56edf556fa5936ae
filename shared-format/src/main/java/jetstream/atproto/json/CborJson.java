package jetstream.atproto.json;

import java.util.Arrays;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;

/**
 * Transcodes DAG-CBOR straight into atproto JSON text, byte for byte what Jetstream emits as a
 * commit's {@code record}: links as {@code {"$link":"<cid>"}}, byte strings as
 * {@code {"$bytes":"<base64 std, unpadded>"}}, integers as JSON integers, strings escaped as Go's
 * {@code encoding/json} does (see {@link JsonBuffer}), and map keys in bytewise order (Go sorts map
 * keys when marshalling) — except blobs, which Go renders from a struct as
 * {@code {"$type":"blob","ref":...,"mimeType":...,"size":...}}.
 *
 * <p>The input is validated with every DAG-CBOR rule of {@link CborReader} during the single pass;
 * no object tree is built. Each map's entries are written in canonical order and then permuted in
 * place when the JSON order differs. Not thread-safe: keep one instance per thread and reuse it.
 */
public final class CborJson {
    /** Canonical position of blob keys ref(3) size(4) $type(5) mimeType(8) mapped to JSON order. */
    private static final int[] BLOB_ORDER = {2, 0, 3, 1};
    private static final byte[] BLOB_KEY_REF = {'r', 'e', 'f'};
    private static final byte[] BLOB_KEY_SIZE = {'s', 'i', 'z', 'e'};
    private static final byte[] BLOB_KEY_TYPE = {'$', 't', 'y', 'p', 'e'};
    private static final byte[] BLOB_KEY_MIME = {'m', 'i', 'm', 'e', 'T', 'y', 'p', 'e'};

    private final CborReader r;
    /** Per map entry: key offset, key length, segment start, segment end (in the output). */
    private int[] entries = new int[256];
    private int top;
    private int[] perm = new int[64];
    private int[] permTmp = new int[64];
    private byte[] scratch = new byte[4096];
    private byte[] src;
    private JsonBuffer out;

    public CborJson() {
        this(CborReader.DEFAULT_MAX_DEPTH);
    }

    public CborJson(int maxDepth) {
        r = new CborReader(maxDepth);
    }

    /**
     * Appends the JSON form of the single DAG-CBOR item spanning {@code cbor[off, off+len)} to
     * {@code out}. On failure {@code out} is restored to its previous length.
     *
     * @throws DecodeException if the bytes are not valid DAG-CBOR
     */
    public void write(byte[] cbor, int off, int len, JsonBuffer out) {
        int mark = out.length();
        r.reset(cbor, off, len);
        src = cbor;
        this.out = out;
        top = 0;
        try {
            value(0);
            r.requireEnd();
        } catch (DecodeException e) {
            out.setLength(mark);
            throw e;
        } finally {
            this.out = null;
            this.src = null;
        }
    }

    /** Like {@link #write} but the item must be a map, as every record is. */
    public void writeRecord(byte[] cbor, int off, int len, JsonBuffer out) {
        r.reset(cbor, off, len);
        if (r.peekKind() != CborReader.KIND_MAP) {
            throw new DecodeException("record_not_map", "a record must be a CBOR map");
        }
        write(cbor, off, len, out);
    }

    /** Allocating convenience for tests and tools. */
    public static String toJson(byte[] cbor) {
        JsonBuffer b = new JsonBuffer();
        new CborJson().write(cbor, 0, cbor.length, b);
        return b.toString();
    }

    private void value(int depth) {
        switch (r.peekKind()) {
            case CborReader.KIND_INT:
                out.appendLong(r.readInt());
                return;
            case CborReader.KIND_BYTES: {
                int n = r.readBytes();
                out.appendAscii("{\"$bytes\":\"");
                out.appendBase64(src, r.lastOffset(), n);
                out.appendAscii("\"}");
                return;
            }
            case CborReader.KIND_TEXT: {
                int n = r.readTextUnvalidated();
                out.appendUtf8String(src, r.lastOffset(), n);
                return;
            }
            case CborReader.KIND_ARRAY: {
                int n = r.readArrayHeader();
                r.checkDepth(depth + 1);
                out.append((byte) '[');
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        out.append((byte) ',');
                    }
                    value(depth + 1);
                }
                out.append((byte) ']');
                return;
            }
            case CborReader.KIND_MAP:
                map(depth + 1);
                return;
            case CborReader.KIND_LINK: {
                int n = r.readLink();
                out.appendAscii("{\"$link\":\"");
                out.appendCid(src, r.lastOffset(), n);
                out.appendAscii("\"}");
                return;
            }
            case CborReader.KIND_BOOL:
                out.appendBoolean(r.readBool());
                return;
            default:
                r.readNull();
                out.appendAscii("null");
        }
    }

    private void map(int depth) {
        int n = r.readMapHeader();
        r.checkDepth(depth);
        out.append((byte) '{');
        if (n == 0) {
            out.append((byte) '}');
            return;
        }
        int base = top;
        int need = base + 4 * n;
        if (need > entries.length) {
            entries = Arrays.copyOf(entries, Math.max(need, entries.length * 2));
        }
        top = need;
        boolean sorted = true;
        boolean blobType = false;
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            int klen = r.readKey(prevOff, prevLen);
            int koff = r.lastOffset();
            if (i > 0) {
                out.append((byte) ',');
                if (sorted && bytewise(src, prevOff, prevLen, koff, klen) > 0) {
                    sorted = false;
                }
            }
            int segStart = out.length();
            out.appendCheckedUtf8String(src, koff, klen);
            out.append((byte) ':');
            if (klen == 5 && n == 4 && isBlobTypeValue(koff)) {
                blobType = true;
            }
            value(depth);
            int e = base + 4 * i;
            entries[e] = koff;
            entries[e + 1] = klen;
            entries[e + 2] = segStart;
            entries[e + 3] = out.length();
            prevOff = koff;
            prevLen = klen;
        }
        if (blobType && isBlobKeySet(base)) {
            reorder(base, n, BLOB_ORDER);
        } else if (!sorted) {
            reorder(base, n, bytewiseOrder(base, n));
        }
        out.append((byte) '}');
        top = base;
    }

    /** Whether the key at {@code koff} is "$type" and the value that follows is the text "blob". */
    private boolean isBlobTypeValue(int koff) {
        int p = r.position();
        return Arrays.equals(src, koff, koff + 5, BLOB_KEY_TYPE, 0, 5)
                && p + 5 <= r.limit() && src[p] == 0x64 && src[p + 1] == 'b' && src[p + 2] == 'l' && src[p + 3] == 'o' && src[p + 4] == 'b';
    }

    private boolean isBlobKeySet(int base) {
        return keyIs(base, BLOB_KEY_REF) && keyIs(base + 4, BLOB_KEY_SIZE) && keyIs(base + 8, BLOB_KEY_TYPE) && keyIs(base + 12, BLOB_KEY_MIME);
    }

    private boolean keyIs(int e, byte[] key) {
        int off = entries[e];
        return entries[e + 1] == key.length && Arrays.equals(src, off, off + key.length, key, 0, key.length);
    }

    /** Rewrites the map's entries (already in the output, comma separated) in the order {@code order}. */
    private void reorder(int base, int n, int[] order) {
        int regionStart = entries[base + 2];
        int regionEnd = out.length();
        int regionLen = regionEnd - regionStart;
        if (scratch.length < regionLen) {
            scratch = new byte[Math.max(regionLen, scratch.length * 2)];
        }
        System.arraycopy(out.array(), regionStart, scratch, 0, regionLen);
        out.setLength(regionStart);
        for (int k = 0; k < n; k++) {
            if (k > 0) {
                out.append((byte) ',');
            }
            int e = base + 4 * order[k];
            out.append(scratch, entries[e + 2] - regionStart, entries[e + 3] - entries[e + 2]);
        }
    }

    /** Entry indices sorted by key bytes (unsigned), as Go orders map keys. */
    private int[] bytewiseOrder(int base, int n) {
        if (perm.length < n) {
            perm = new int[Math.max(n, perm.length * 2)];
            permTmp = new int[perm.length];
        }
        for (int i = 0; i < n; i++) {
            perm[i] = i;
        }
        if (n <= 16) {
            for (int i = 1; i < n; i++) {
                int v = perm[i];
                int j = i - 1;
                while (j >= 0 && compare(base, perm[j], v) > 0) {
                    perm[j + 1] = perm[j];
                    j--;
                }
                perm[j + 1] = v;
            }
        } else {
            mergeSort(base, 0, n);
        }
        return perm;
    }

    private void mergeSort(int base, int from, int to) {
        if (to - from < 2) {
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(base, from, mid);
        mergeSort(base, mid, to);
        int i = from;
        int j = mid;
        int k = from;
        while (i < mid && j < to) {
            permTmp[k++] = compare(base, perm[i], perm[j]) <= 0 ? perm[i++] : perm[j++];
        }
        while (i < mid) {
            permTmp[k++] = perm[i++];
        }
        while (j < to) {
            permTmp[k++] = perm[j++];
        }
        System.arraycopy(permTmp, from, perm, from, to - from);
    }

    private int compare(int base, int a, int b) {
        int ea = base + 4 * a;
        int eb = base + 4 * b;
        return bytewise(src, entries[ea], entries[ea + 1], entries[eb], entries[eb + 1]);
    }

    /** Unsigned bytewise comparison of two short keys in the same buffer (a loop beats the intrinsic's setup here). */
    private static int bytewise(byte[] b, int aOff, int aLen, int bOff, int bLen) {
        int n = Math.min(aLen, bLen);
        for (int i = 0; i < n; i++) {
            int x = b[aOff + i] & 0xff;
            int y = b[bOff + i] & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        return aLen - bLen;
    }
}
