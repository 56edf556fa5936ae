/**
 * The readable-log feed: the contract between the ingester (the only writer) and every reader
 * process (archive-server, fanout-gateways). Byte layout in {@code docs/feed-protocol.md}.
 * May depend on {@code jetstream.atproto} ({@code DecodeException}), {@code jetstream.segment} and hash4j;
 * no Quarkus (the services adapt it).
 *
 * <ul>
 *   <li>{@link jetstream.feed.FeedFrame}: the frames (subscribe / subscribed / too-old, events,
 *       durable watermark, vacancies, segment sealed / rewritten, phase, steady-writer-running,
 *       backfill progress, compaction deadline, import status, heartbeat).</li>
 *   <li>{@link jetstream.feed.FeedCodec}: {@code encode(frame)}, {@code encodeEvent(row slices)} (the
 *       ingester encodes each event once), {@code contentLength(prefix)} and
 *       {@code decode(content)}; malformed bytes throw {@link jetstream.atproto.DecodeException}
 *       with a {@code feed_*} reason.</li>
 *   <li>{@link jetstream.feed.FeedClient}: {@code start(Options.defaults(socket), fromSeq, listener)}
 *       follows the feed on a daemon thread (reconnects with backoff, resumes after the last event
 *       delivered, stops on too-old); {@code subscribe(options, fromSeq, capacity)} is the iterator
 *       view.</li>
 *   <li>{@link jetstream.feed.VacancyFile}: {@code load(dataDir)} the registered vacancies
 *       ({@code data/vacancies.bin}), {@code explains(vacancies, lastSeq, nextSeq)} for cold replay;
 *       {@code write} is the ingester's.</li>
 *   <li>{@link jetstream.feed.Vacancy}, {@link jetstream.feed.LifecyclePhase}: shared values.</li>
 * </ul>
 */
package jetstream.feed;
