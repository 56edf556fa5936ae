package jetstream.segment;

/** The row kind byte of a block (docs/segment-format.md). */
public enum Kind {
    CREATE(1, null),
    UPDATE(2, null),
    DELETE(3, null),
    IDENTITY(4, "$identity"),
    ACCOUNT(5, "$account"),
    SYNC(6, "$sync"),
    CREATE_RESYNC(7, null);

    private static final Kind[] BY_CODE = {null, CREATE, UPDATE, DELETE, IDENTITY, ACCOUNT, SYNC, CREATE_RESYNC};

    private final int code;
    private final String sentinel;

    Kind(int code, String sentinel) {
        this.code = code;
        this.sentinel = sentinel;
    }

    /** The on-disk byte value, 1..7. */
    public int code() {
        return code;
    }

    /**
     * The sentinel collection interned into the collection index for blocks holding this kind
     * (docs/segment-format.md), or null for commit kinds. The {@code $} keeps it from ever matching an NSID.
     */
    public String sentinel() {
        return sentinel;
    }

    /** Create, update, delete and resync-create rows describe records. */
    public boolean isCommit() {
        return code <= 3 || code == 7;
    }

    /** Rows that carry record bytes (create, update, resync-create). */
    public boolean isMaterialization() {
        return code == 1 || code == 2 || code == 7;
    }

    public static boolean isValid(int code) {
        return code >= 1 && code <= 7;
    }

    /** @throws SegmentException INVALID_KIND when {@code code} is outside 1..7 */
    public static Kind of(int code) {
        if (!isValid(code)) {
            throw new SegmentException(SegmentException.Type.INVALID_KIND, "invalid kind " + code);
        }
        return BY_CODE[code];
    }
}
