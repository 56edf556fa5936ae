package jetstream.archive;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads the stats files the fanout-gateways publish beside the feed socket
 * ({@code <data-dir>/run/gateway-<id>.json}, replaced whole by rename every few seconds; see
 * docs/decisions.md). A file not refreshed for {@link #STALE_MICROS} belongs to a gateway that
 * stopped or hangs: it is listed as stale and its count is not added up; after
 * {@link #FORGET_MICROS} (a killed gateway never removes its file) it is not listed at all.
 */
final class GatewayStats {
    static final long STALE_MICROS = 15_000_000L;
    static final long FORGET_MICROS = 600_000_000L;

    /** One gateway as its file describes it. */
    record Entry(String id, String address, long subscribers, long updatedAtMicros, boolean stale) {}

    private GatewayStats() {}

    /** The listed gateways, sorted by id; unreadable or malformed files are skipped. */
    static List<Entry> read(Path runDir, long nowMicros) {
        List<Entry> out = new ArrayList<>();
        if (!Files.isDirectory(runDir)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(runDir, "gateway-*.json")) {
            for (Path p : ds) {
                Entry e = parse(p, nowMicros);
                if (e != null && nowMicros - e.updatedAtMicros() <= FORGET_MICROS) {
                    out.add(e);
                }
            }
        } catch (IOException e) {
            return out;
        }
        out.sort(Comparator.comparing(Entry::id));
        return out;
    }

    private static Entry parse(Path p, long nowMicros) {
        try {
            JsonObject o = new JsonObject(new String(Files.readAllBytes(p), StandardCharsets.UTF_8));
            String id = o.getString("id");
            Long updated = o.getLong("updatedAt");
            Long subs = o.getLong("subscribers");
            if (id == null || updated == null || subs == null) {
                return null;
            }
            return new Entry(id, o.getString("address", ""), subs, updated, nowMicros - updated > STALE_MICROS);
        } catch (NoSuchFileException e) {
            return null; // replaced or removed between the listing and the read
        } catch (IOException | RuntimeException e) {
            return null; // a half-written file cannot exist (rename), so this is a foreign or damaged file
        }
    }

    /** The subscribers of the live (non-stale) gateways; null when there is none to count. */
    static Long total(List<Entry> gateways) {
        long sum = 0;
        boolean any = false;
        for (Entry e : gateways) {
            if (!e.stale()) {
                sum += e.subscribers();
                any = true;
            }
        }
        return any ? sum : null;
    }
}
