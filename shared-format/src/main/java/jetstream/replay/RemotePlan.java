package jetstream.replay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import jetstream.atproto.json.JsonBuffer;
import jetstream.filter.CollectionSet;
import jetstream.filter.KindClass;
import jetstream.filter.SubscriptionFilter;
import jetstream.segment.BlockIndex;

/**
 * Block skipping for a filtered cold replay over the archive's HTTP, where the DID blooms and the
 * collection index stay on the archive: the subscription filter mapped onto planSnapshot's (docs/http-api.md: planSnapshot)
 * and the archive asked, once per segment a reader reaches, which of its blocks may hold a match. The
 * mapping is the local reader's candidate rule ({@code ColdReader.compute}): the subscriber's DIDs; and
 * unless commits are wanted without a collection constraint (or a v2 filter takes every kind, future ones
 * included), the admitted kinds — v1 always takes identity and account, never sync — with the collection
 * patterns when commits are admitted. The planner's answer is one-sided (no false negatives), so the
 * exact filter on rows still decides. A refused plan (the archive's limits), a whole-segment entry or an
 * entry for another checksum reads every block, as before.
 */
final class RemotePlan {
    private static final JsonFactory JSON = new JsonFactory();

    /** The filter members of the request ({@code "kinds":…,"dids":…,"collections":…}), without braces or window. */
    private final String members;

    private RemotePlan(String members) {
        this.members = members;
    }

    /** The plan for {@code filter}, or null when no block can be skipped for it. */
    static RemotePlan of(SubscriptionFilter filter) {
        if (filter.isMatchAll()) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        if (filter.dids() != null) {
            parts.add("\"dids\":" + array(new ArrayList<>(filter.dids())));
        }
        int mask = filter.kindMask();
        boolean all = mask == SubscriptionFilter.ALL_KINDS;
        CollectionSet coll = filter.collections();
        boolean commits = all || (mask & KindClass.COMMIT) != 0;
        if (!(commits && coll == null) && !(all && !filter.isV1())) {
            List<String> kinds = new ArrayList<>();
            if (commits) {
                kinds.add("commit");
            }
            if (filter.isV1() || all || (mask & KindClass.IDENTITY) != 0) {
                kinds.add("identity");
            }
            if (filter.isV1() || all || (mask & KindClass.ACCOUNT) != 0) {
                kinds.add("account");
            }
            if (!filter.isV1() && (mask & KindClass.SYNC) != 0) {
                kinds.add("sync");
            }
            parts.add("\"kinds\":" + array(kinds));
            if (commits) {
                List<String> patterns = new ArrayList<>(coll.exact());
                for (String p : coll.prefixes()) {
                    patterns.add(p + "*");
                }
                parts.add("\"collections\":" + array(patterns));
            }
        }
        return parts.isEmpty() ? null : new RemotePlan(String.join(",", parts));
    }

    private static String array(List<String> values) {
        JsonBuffer b = new JsonBuffer(64);
        b.append((byte) '[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                b.append((byte) ',');
            }
            b.appendString(values.get(i));
        }
        b.append((byte) ']');
        return new String(b.toByteArray(), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The request body for the seqs of {@code s}. */
    byte[] body(SealedSegment s) {
        return ("{" + members + ",\"afterSeq\":" + (s.minSeq() - 1) + ",\"beforeSeq\":" + s.maxSeq() + "}")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * The blocks of {@code s} that may hold a match, or null for "all of them": no plan (refused), a
     * whole-segment entry, or an entry for another checksum (a rewrite; its block reads notice it).
     */
    BitSet blocks(ArchiveHttp archive, SealedSegment s, BlockIndex index) {
        byte[] answer = archive.plan(body(s));
        if (answer == null) {
            return null;
        }
        BitSet out = new BitSet(index.size());
        long plannedThrough;
        try (JsonParser p = JSON.createParser(answer)) {
            plannedThrough = parse(p, s, out);
        } catch (IOException | RuntimeException e) {
            throw new UncheckedIOException(new IOException("malformed planSnapshot answer: " + e.getMessage(), e));
        }
        if (plannedThrough < 0) {
            return null;
        }
        // a page the archive truncated plans only up to plannedThroughSeq: the blocks past it stay candidates
        for (int b = 0; b < index.size(); b++) {
            if (index.get(b).maxSeq() > plannedThrough) {
                out.set(b);
            }
        }
        return out;
    }

    /** Sets the planned blocks of {@code s}; returns plannedThroughSeq, or -1 when every block must be read. */
    private static long parse(JsonParser p, SealedSegment s, BitSet out) throws IOException {
        expect(p.nextToken() == JsonToken.START_OBJECT);
        long plannedThrough = Long.MAX_VALUE;
        boolean all = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            if ("plannedThroughSeq".equals(field)) {
                plannedThrough = p.getLongValue();
            } else if ("segments".equals(field)) {
                expect(t == JsonToken.START_ARRAY);
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    all |= entry(p, s, out);
                }
            } else {
                p.skipChildren();
            }
        }
        return all ? -1 : plannedThrough;
    }

    /** One segment entry; true when it says "read every block of {@code s}". */
    private static boolean entry(JsonParser p, SealedSegment s, BitSet out) throws IOException {
        String name = null;
        String checksum = null;
        String mode = null;
        List<int[]> ranges = new ArrayList<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            switch (field) {
                case "name" -> name = p.getText();
                case "checksum" -> checksum = p.getText();
                case "mode" -> mode = p.getText();
                case "blocks" -> {
                    expect(t == JsonToken.START_ARRAY);
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        int first = -1;
                        int last = -1;
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String k = p.currentName();
                            p.nextToken();
                            if ("first".equals(k)) {
                                first = p.getIntValue();
                            } else if ("last".equals(k)) {
                                last = p.getIntValue();
                            } else {
                                p.skipChildren();
                            }
                        }
                        expect(first >= 0 && last >= first);
                        ranges.add(new int[] {first, last});
                    }
                }
                default -> p.skipChildren();
            }
        }
        if (!s.name().equals(name)) {
            return false;
        }
        if (!ArchiveHttp.hex(s.checksum()).equals(checksum) || !"blocks".equals(mode)) {
            return true;
        }
        for (int[] r : ranges) {
            out.set(r[0], r[1] + 1);
        }
        return false;
    }

    private static void expect(boolean ok) throws IOException {
        if (!ok) {
            throw new IOException("unexpected JSON structure");
        }
    }
}
