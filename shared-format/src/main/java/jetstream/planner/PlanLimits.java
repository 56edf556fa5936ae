package jetstream.planner;

/**
 * Server-side bounds of one planSnapshot page (docs/configuration.md {@code --plan-*}): 0 for a filter maximum
 * disables that filter, {@code maxEntries} 0 means unlimited, the threshold is in (0, 1].
 */
public record PlanLimits(int maxDids, int maxCollections, int maxEntries, double wholeSegmentThreshold) {
    public static final int MAX_KINDS = 4;
    public static final int DIDS_CEILING = 10_000;
    public static final int COLLECTIONS_CEILING = 100;
    public static final PlanLimits DEFAULTS = new PlanLimits(10_000, 100, 100_000, 0.75);

    public PlanLimits {
        if (maxDids < 0 || maxDids > DIDS_CEILING) {
            throw new IllegalArgumentException("plan max DIDs must be 0.." + DIDS_CEILING + ", got " + maxDids);
        }
        if (maxCollections < 0 || maxCollections > COLLECTIONS_CEILING) {
            throw new IllegalArgumentException("plan max collections must be 0.." + COLLECTIONS_CEILING
                    + ", got " + maxCollections);
        }
        if (maxEntries < 0) {
            throw new IllegalArgumentException("plan max entries must be >= 0, got " + maxEntries);
        }
        if (!(wholeSegmentThreshold > 0 && wholeSegmentThreshold <= 1)) {
            throw new IllegalArgumentException("whole-segment threshold must be in (0, 1], got "
                    + wholeSegmentThreshold);
        }
    }
}
