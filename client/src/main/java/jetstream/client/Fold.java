package jetstream.client;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The current-state view of a stream (the oracle's fold-convergence rule, docs/client.md: Folding): creates and
 * updates set a record, deletes remove it, and an account deletion or a {@code #sync} of a repo
 * drops every record of that DID (a sync restarts the repo from its new root, so what came before
 * is no longer known to be current). Not thread-safe.
 */
public final class Fold {
    /** {@code at://did/collection/rkey} → record CID, per DID for the repo-wide removals. */
    private final Map<String, Map<String, String>> byDid = new HashMap<>();
    private long applied;

    public void apply(Event e) {
        applied++;
        switch (e.kind()) {
            case COMMIT -> {
                String key = e.collection() + "/" + e.rkey();
                if (e.hasRecord()) {
                    byDid.computeIfAbsent(e.did(), d -> new HashMap<>()).put(key, e.cid());
                } else {
                    Map<String, String> m = byDid.get(e.did());
                    if (m != null) {
                        m.remove(key);
                    }
                }
            }
            case SYNC -> byDid.remove(e.did());
            case ACCOUNT -> {
                if (isDeletion(e)) {
                    byDid.remove(e.did());
                }
            }
            case IDENTITY -> { }
        }
    }

    public void applyAll(Iterable<Event> events) {
        for (Event e : events) {
            apply(e);
        }
    }

    /** Events applied so far. */
    public long applied() {
        return applied;
    }

    /** The folded state: {@code at://did/collection/rkey} → CID, sorted. */
    public Map<String, String> records() {
        Map<String, String> out = new TreeMap<>();
        byDid.forEach((did, m) -> m.forEach((k, cid) -> out.put("at://" + did + "/" + k, cid)));
        return Collections.unmodifiableMap(out);
    }

    public int size() {
        int n = 0;
        for (Map<String, String> m : byDid.values()) {
            n += m.size();
        }
        return n;
    }

    /** An {@code #account} event whose status is {@code deleted}. */
    static boolean isDeletion(Event e) {
        try (JsonParser p = XrpcCalls.JSON.createParser(e.toJsonBytes())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return false;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String k = p.currentName();
                JsonToken t = p.nextToken();
                if (k.equals("account") && t == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String f = p.currentName();
                        JsonToken v = p.nextToken();
                        if (f.equals("status") && v == JsonToken.VALUE_STRING) {
                            return p.getText().equals("deleted");
                        }
                        p.skipChildren();
                    }
                    return false;
                }
                p.skipChildren();
            }
            return false;
        } catch (IOException ex) {
            throw new JetstreamException("account event payload is not JSON: " + ex.getMessage(), ex);
        }
    }
}
