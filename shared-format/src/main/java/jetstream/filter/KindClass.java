package jetstream.filter;

/** The wire class of each stored kind (docs/wire.md: v2 parameters): 1,2,3,7 commit; 4 identity; 5 account; 6 sync. */
public final class KindClass {
    public static final int COMMIT = 1;
    public static final int IDENTITY = 1 << 1;
    public static final int ACCOUNT = 1 << 2;
    public static final int SYNC = 1 << 3;

    private KindClass() {}

    /** The class bit of a stored kind; 0 for a kind this build does not know. */
    public static int of(int kind) {
        return switch (kind) {
            case 1, 2, 3, 7 -> COMMIT;
            case 4 -> IDENTITY;
            case 5 -> ACCOUNT;
            case 6 -> SYNC;
            default -> 0;
        };
    }

    /** The bit of a v2 {@code kinds} value, or -1 when the value is not one of the four names. */
    public static int parse(String name) {
        return switch (name) {
            case "commit" -> COMMIT;
            case "identity" -> IDENTITY;
            case "account" -> ACCOUNT;
            case "sync" -> SYNC;
            default -> -1;
        };
    }
}
