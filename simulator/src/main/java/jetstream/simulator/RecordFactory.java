package jetstream.simulator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;

/**
 * Record bodies shaped like the real network's (posts with facets, replies and image embeds,
 * likes, reposts, follows, blocks, profiles with blobs, and a few non-Bluesky lexicons), so
 * compression and decoding figures measured against the simulator mean something.
 */
final class RecordFactory {
    static final String POST = "app.bsky.feed.post";
    static final String LIKE = "app.bsky.feed.like";
    static final String REPOST = "app.bsky.feed.repost";
    static final String FOLLOW = "app.bsky.graph.follow";
    static final String BLOCK = "app.bsky.graph.block";
    static final String PROFILE = "app.bsky.actor.profile";
    static final String STATUS = "xyz.statusphere.status";
    static final String STAR = "sh.tangled.feed.star";
    static final String FRONTPAGE = "fyi.unravel.frontpage.post";

    /** Collections of new records and their weights (likes dominate, as on the network). */
    private static final String[] COLLECTIONS = {LIKE, POST, FOLLOW, REPOST, BLOCK, STATUS, STAR, FRONTPAGE};
    private static final int[] WEIGHTS = {46, 28, 12, 10, 1, 1, 1, 1};
    private static final int WEIGHT_SUM = 100;

    private static final String[] WORDS = ("the a of to and in is it you that for on was with as have be at "
            + "this are from or but not by what all were we when your can said there use an each which she do "
            + "how their if will up other about out many then them these so some her would make like him into "
            + "time has look two more write go see number no way could people my than first water been call "
            + "who oil its now find long down day did get come made may part sky blue post thread today "
            + "coffee morning release build deploy weekend photo music reading garden cat dog bike rain "
            + "protocol network archive stream feed labeler moderation atproto federation server").split(" ");
    private static final String[] LANGS = {"en", "en", "en", "ja", "pt", "de", "es", "fr", "ko"};
    private static final String[] EMOJI = {"\uD83D\uDE42", "\uD83D\uDE0E", "\uD83E\uDD14", "\uD83C\uDF89",
            "\uD83D\uDCDA", "\u2615", "\uD83D\uDC08"};

    private final World world;

    RecordFactory(World world) {
        this.world = world;
    }

    String pickCollection(Prng r) {
        int x = r.nextInt(WEIGHT_SUM);
        for (int i = 0; i < COLLECTIONS.length; i++) {
            x -= WEIGHTS[i];
            if (x < 0) {
                return COLLECTIONS[i];
            }
        }
        return LIKE;
    }

    /** A record of {@code collection} created at {@code micros} by account {@code author}. */
    byte[] body(String collection, Prng r, long micros, int author) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("$type", collection);
        String createdAt = Tids.datetime(micros);
        switch (collection) {
            case POST -> post(m, r, micros);
            case LIKE, REPOST -> m.put("subject", strongRef(r, micros));
            case FOLLOW, BLOCK -> m.put("subject", world.did(otherAccount(r, author)));
            case PROFILE -> profile(m, r, author);
            case STATUS -> m.put("status", EMOJI[r.nextInt(EMOJI.length)]);
            case STAR -> m.put("subject", "at://" + world.did(otherAccount(r, author)) + "/sh.tangled.repo/"
                    + Tids.of(micros - 1_000_000L * (1 + r.nextInt(100_000)), r.nextInt(1024)));
            case FRONTPAGE -> {
                m.put("title", words(r, 3 + r.nextInt(8)));
                m.put("url", "https://example.com/" + WORDS[r.nextInt(WORDS.length)] + "/" + r.nextInt(100_000));
            }
            default -> m.put("text", words(r, 5));
        }
        if (!collection.equals(PROFILE)) {
            m.put("createdAt", createdAt);
        }
        return DagCbor.encode(m);
    }

    private void post(Map<String, Object> m, Prng r, long micros) {
        String text = words(r, 3 + r.nextInt(40));
        m.put("text", text);
        m.put("langs", List.of(LANGS[r.nextInt(LANGS.length)]));
        if (r.chance(0.25)) {
            Map<String, Object> root = strongRef(r, micros);
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("root", root);
            reply.put("parent", r.chance(0.5) ? root : strongRef(r, micros));
            m.put("reply", reply);
        }
        if (r.chance(0.15)) {
            Map<String, Object> image = new LinkedHashMap<>();
            image.put("alt", r.chance(0.5) ? "" : words(r, 4));
            image.put("image", blob(r, "image/jpeg", 40_000 + r.nextInt(900_000)));
            Map<String, Object> ratio = new LinkedHashMap<>();
            ratio.put("width", 800L + r.nextInt(1200));
            ratio.put("height", 600L + r.nextInt(1200));
            image.put("aspectRatio", ratio);
            Map<String, Object> embed = new LinkedHashMap<>();
            embed.put("$type", "app.bsky.embed.images");
            embed.put("images", List.of(image));
            m.put("embed", embed);
        } else if (r.chance(0.1)) {
            int start = text.indexOf(' ') + 1;
            int end = text.indexOf(' ', start);
            if (start > 0 && end > start) {
                Map<String, Object> index = new LinkedHashMap<>();
                index.put("byteStart", (long) start);
                index.put("byteEnd", (long) end);
                Map<String, Object> feature = new LinkedHashMap<>();
                feature.put("$type", "app.bsky.richtext.facet#tag");
                feature.put("tag", text.substring(start, end));
                Map<String, Object> facet = new LinkedHashMap<>();
                facet.put("index", index);
                facet.put("features", List.of(feature));
                m.put("facets", List.of(facet));
            }
        }
    }

    private void profile(Map<String, Object> m, Prng r, int author) {
        m.put("displayName", capitalise(WORDS[r.nextInt(WORDS.length)]) + " " + author);
        m.put("description", words(r, 4 + r.nextInt(20)));
        m.put("avatar", blob(r, "image/jpeg", 10_000 + r.nextInt(200_000)));
        if (r.chance(0.5)) {
            m.put("banner", blob(r, "image/png", 50_000 + r.nextInt(800_000)));
        }
    }

    private static Map<String, Object> blob(Prng r, String mime, int size) {
        byte[] content = new byte[24];
        r.nextBytes(content);
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("$type", "blob");
        b.put("ref", Cid.ofRaw(content, 0, content.length));
        b.put("mimeType", mime);
        b.put("size", (long) size);
        return b;
    }

    private Map<String, Object> strongRef(Prng r, long micros) {
        byte[] content = new byte[16];
        r.nextBytes(content);
        Map<String, Object> ref = new LinkedHashMap<>();
        ref.put("cid", Cid.ofDagCbor(content).toString());
        ref.put("uri", "at://" + world.did(r.nextInt(world.accountCount())) + "/" + POST + "/"
                + Tids.of(micros - 1_000L * (1 + r.nextInt(10_000_000)), r.nextInt(1024)));
        return ref;
    }

    private int otherAccount(Prng r, int author) {
        int n = world.accountCount();
        int o = r.nextInt(n);
        return o == author && n > 1 ? (o + 1) % n : o;
    }

    private static String words(Prng r, int n) {
        List<String> w = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            w.add(WORDS[r.nextInt(WORDS.length)]);
        }
        return String.join(" ", w);
    }

    private static String capitalise(String s) {
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}
