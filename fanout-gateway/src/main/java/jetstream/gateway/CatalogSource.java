package jetstream.gateway;

import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;

import org.jboss.logging.Logger;

import jetstream.feed.FeedClient;
import jetstream.replay.ArchiveHttp;
import jetstream.replay.BlockCache;
import jetstream.replay.FeedActiveBlocks;
import jetstream.replay.SegmentCatalog;

/**
 * Where cold replay and cursor resolution find sealed segments: {@code <data-dir>/segments}, or in
 * remote mode ({@code JETSTREAM_ARCHIVE_URL}) the archive-server's HTTP. Checks the catalog for the
 * gateway's sweep (on the cold pool) and logs the archive's reachability when it changes.
 */
final class CatalogSource {
    private static final Logger LOG = Logger.getLogger(CatalogSource.class);

    private final SegmentCatalog catalog;
    private volatile boolean wasReachable = true;

    CatalogSource(SegmentCatalog catalog) {
        this.catalog = catalog;
    }

    /**
     * @param feed the ingester's TCP feed, or null: with it, a remote-mode gateway reads the writer's
     *     active blocks from the ingester (the seqs between the archive's last seal and the ring)
     */
    static CatalogSource open(GatewayConfig config, BlockCache blocks, FeedClient.Remote feed) {
        String url = config.archiveUrl().orElse("");
        if (url.isBlank()) {
            return new CatalogSource(new SegmentCatalog(Path.of(config.dataDir(), "segments")));
        }
        ArchiveHttp archive = new ArchiveHttp(URI.create(url), config.archiveTimeout());
        LOG.infof("cold replay reads the archive at %s%s", archive.base(),
                feed == null ? "" : ", the active segments over the ingester's feed");
        FeedActiveBlocks active = feed == null ? null : new FeedActiveBlocks(feed, config.archiveTimeout(), blocks);
        return new CatalogSource(new SegmentCatalog(archive, blocks, active));
    }

    SegmentCatalog catalog() {
        return catalog;
    }

    /** True without an archive URL; else whether the archive answered the last request. */
    boolean reachable() {
        ArchiveHttp archive = catalog.archive();
        return archive == null || archive.reachable();
    }

    /** The scan before any subscriber. An unreachable archive leaves the gateway unready, never failed. */
    void firstScan() {
        if (catalog.archive() == null) {
            catalog.refresh();
            return;
        }
        try {
            catalog.refresh();
        } catch (UncheckedIOException e) {
            wasReachable = false;
            LOG.warnf("archive unreachable at start: %s", e.getMessage());
        }
    }

    /** Rescans when the catalog says it is stale (in remote mode: while the archive is unreachable, and every 30 s). */
    void check() {
        try {
            if (catalog.stale()) {
                catalog.refresh();
            }
        } catch (UncheckedIOException e) {
            if (catalog.archive() == null) {
                LOG.errorf(e, "segment catalog check failed");
            } else if (wasReachable) {
                LOG.warnf("archive unreachable: %s", e.getMessage());
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "segment catalog check failed");
        }
        boolean now = reachable();
        if (now && !wasReachable) {
            LOG.infof("archive reachable again at %s", catalog.archive().base());
        }
        wasReachable = now;
    }
}
