package jetstream.filter;

import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Exact NSIDs plus prefixes (from {@code head.*}, stored with the trailing dot). Immutable; the
 * match is a hash lookup then a short prefix scan.
 */
public final class CollectionSet {
    private final Set<String> exact;
    private final String[] prefixes;

    CollectionSet(LinkedHashSet<String> exact, LinkedHashSet<String> prefixes) {
        this.exact = new HashSet<>(exact);
        this.prefixes = prefixes.toArray(new String[0]);
    }

    /** Entries after dedupe (exact and prefixes together), the quantity the caps count. */
    public int size() {
        return exact.size() + prefixes.length;
    }

    public boolean matches(String collection) {
        if (exact.contains(collection)) {
            return true;
        }
        for (String p : prefixes) {
            if (collection.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    public Set<String> exact() {
        return Set.copyOf(exact);
    }

    public Set<String> prefixes() {
        return Set.copyOf(Arrays.asList(prefixes));
    }
}
