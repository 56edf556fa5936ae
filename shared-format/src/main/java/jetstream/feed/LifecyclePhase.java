package jetstream.feed;

/**
 * The persisted {@code phase} values (docs/architecture.md: Lifecycle; docs/lifecycle.md: Phases) with their feed byte codes;
 * NONE is a fresh data directory.
 */
public enum LifecyclePhase {
    NONE(0, ""),
    BOOTSTRAP(1, "bootstrap"),
    MERGING(2, "merging"),
    STEADY_STATE(3, "steady_state");

    private final int code;
    private final String stored;

    LifecyclePhase(int code, String stored) {
        this.code = code;
        this.stored = stored;
    }

    public int code() {
        return code;
    }

    /** The ASCII value of the {@code phase} metadata key ("" for NONE, which is never stored). */
    public String stored() {
        return stored;
    }

    /** The phase of a feed code, or null when the code is unknown. */
    public static LifecyclePhase ofCode(int code) {
        for (LifecyclePhase p : values()) {
            if (p.code == code) {
                return p;
            }
        }
        return null;
    }

    /** The phase of a stored value, or null when the value is not a phase. */
    public static LifecyclePhase ofStored(String value) {
        for (LifecyclePhase p : values()) {
            if (p != NONE && p.stored.equals(value)) {
                return p;
            }
        }
        return null;
    }
}
