/**
 * A deterministic fake atproto network with real bytes: a relay, many PDS hosts and a PLC directory
 * in one process, for component tests, the demo and benchmarks.
 * May depend on shared-format's {@code jetstream.atproto} (the real encoders and signers), Jackson and
 * Bouncy Castle; nothing of the services (they are what it is used to test).
 *
 * <h2>Embedding (plain Java, no framework)</h2>
 * <pre>{@code
 * SimConfig cfg = SimConfig.small();          // or demo(), load(), profile("small")
 * cfg.seed = 7;                               // every knob is a public field
 * try (Simulator sim = Simulator.start(cfg)) { // binds 127.0.0.1, ephemeral ports
 *     sim.url();              // http://127.0.0.1:<port>: relay XRPC, PLC, ground truth
 *     sim.firehoseUrl();      // ws://127.0.0.1:<port>/xrpc/com.atproto.sync.subscribeRepos
 *     sim.hostnames();        // ["pds-0.sim.test", ...] as listHosts and DID documents name them
 *     sim.hostUrl("pds-0.sim.test"); // http://127.0.0.1:<that host's own port>
 *     sim.hostMap();          // hostname -> URL for every host
 *     sim.advance(1000);      // produce the next 1000 firehose events now (deterministic)
 *     sim.liveRate(2000);     // live firehose at 2,000 events/s from now on; 0 pauses it
 *     sim.headSeq();          // newest firehose seq
 *     GroundTruth t = sim.truth();
 *     t.dids(); t.status(did); t.handle(did); t.hostname(did); t.signingKey(did);
 *     t.records(did);         // collection/rkey -> CID, the live records now
 *     t.record(did, path); t.rev(did); t.head(did); t.seq();
 * }                           // close() == stop()
 * }</pre>
 * With {@code eventsPerSecond = 0} (the small profile) events happen only on {@code advance}
 * until {@code liveRate} sets a rate; otherwise a pacer produces them at that rate in addition.
 *
 * <h2>Reaching the PDS hosts</h2>
 * Hosts are named {@code pds-<n>.sim.test} (the reserved {@code .test} TLD, so nothing resolves
 * them by accident); DID documents give {@code https://pds-<n>.sim.test} as the PDS endpoint. Each
 * host is served on its own loopback port ({@link jetstream.simulator.Simulator#hostUrl}, also
 * {@code GET /sim/hosts}); in addition the main port routes a request to a host when its
 * {@code Host} header names it. A client therefore needs one dev override: map a
 * {@code *.sim.test} hostname to its {@code hostUrl} (or connect to the main port and send the
 * hostname as {@code Host}). Hostile hostnames (fault {@code hostileHosts}) must never be dialled.
 *
 * <h2>Wire surface</h2>
 * Main port (relay + PLC):
 * <ul>
 * <li>{@code GET /xrpc/com.atproto.sync.listHosts?limit&cursor} — {@code {cursor?, hosts:[{hostname,
 *     seq, accountCount, status}]}}; with {@code listHosts=false} 501 MethodNotImplemented, like a PDS.
 * <li>{@code GET /xrpc/com.atproto.sync.listRepos?limit&cursor} (every host), {@code getRepo?did},
 *     {@code getLatestCommit?did}.
 * <li>{@code GET /xrpc/com.atproto.sync.subscribeRepos?cursor} — WebSocket, binary DAG-CBOR frames:
 *     {@code #commit} (Sync 1.1: prevData, proof nodes in the CAR diff), {@code #identity},
 *     {@code #account} (deactivation, takedown, deletion, reactivation), {@code #sync}. No cursor:
 *     live from the head. A cursor in the replay buffer: events after it. A cursor older than the
 *     buffer: {@code #info OutdatedCursor}, then the whole buffer. A cursor beyond the head: error
 *     frame {@code FutureCursor}, then close 1000. A subscriber that falls out of the buffer: error
 *     frame {@code ConsumerTooSlow}, close 1008.
 * <li>{@code GET /<did>} — the PLC DID document (Multikey {@code #atproto} key, secp256k1 or P-256,
 *     {@code #atproto_pds} service).
 * <li>{@code GET /sim/hosts}, {@code GET /sim/truth/<did>} (status, handle, hostname, rev, seq,
 *     records, and {@code downloadRefused}: whether a getRepo of it was ever refused because the
 *     account was deactivated or taken down), {@code GET /_health}.
 * </ul>
 * PDS ports: {@code com.atproto.sync.listRepos} (its accounts; {@code {cursor?, repos:[{did, head,
 * rev, active, status?}]}}), {@code getRepo} (CAR v1: commit, then the MST depth first with its
 * records), {@code getLatestCommit}, {@code com.atproto.repo.getRecord}. Errors are XRPC envelopes
 * {@code {error, message}}: 400 RepoNotFound / RepoDeactivated / RepoTakendown / RecordNotFound /
 * InvalidRequest, 501 MethodNotImplemented.
 *
 * <h2>Faults (all off by default; fields of {@link jetstream.simulator.Faults}) and what a client sees</h2>
 * Host-selecting knobs count from the last host down (dead, then banned, idle, slow).
 * <ul>
 * <li>{@code hostileHosts}: listHosts also lists {@code 127.0.0.1}, {@code localhost}, private and
 *     link-local addresses, {@code [::1]}, an overlong name, a name with a port, and others.
 * <li>{@code deadHosts=n}: listed {@code offline}; their port refuses connections; requests routed
 *     by Host header get the connection reset with no response.
 * <li>{@code bannedHosts}, {@code idleHosts}: listed with that status; they still answer.
 * <li>{@code slowHosts=n}, {@code slowMillis}: every response of those hosts comes that late.
 * <li>{@code errorBurstEvery=n}, {@code errorBurstLength=k}, {@code errorStatus}: per PDS, requests
 *     0..k-1 of every n answer that status with an XRPC error body.
 * <li>{@code rateLimit=r}: past r requests in a second a PDS answers 429 RateLimitExceeded with
 *     {@code ratelimit-limit}, {@code ratelimit-remaining: 0}, {@code ratelimit-reset} (epoch s),
 *     {@code ratelimit-policy: r;w=1}.
 * <li>{@code notFoundEvery=n}: every n-th account (index % n == n-1) is listed by listRepos but
 *     getRepo/getLatestCommit answer 404 RepoNotFound.
 * <li>{@code truncateCarEvery=n}: a 200 whose CAR stops mid-block ({@code car_truncated});
 *     {@code abortCarEvery=n}: full Content-Length declared, half sent, connection reset (an I/O
 *     error); {@code corruptCarEvery=n}: one byte flipped inside a record block
 *     ({@code car_cid_mismatch}).
 * <li>{@code disconnectEvery=n}: the relay ends each subscription after n frames without a close
 *     frame (abnormal closure 1006); resuming from the last seq loses nothing.
 * <li>{@code malformedFrameEvery=n}: before each event whose seq is a multiple of n an extra
 *     undecodable frame (cut in half, garbage, header only, unknown op); seqs stay contiguous.
 * <li>{@code invalidRevEvery}, {@code invalidCollectionEvery}, {@code invalidRkeyEvery}: commits
 *     (seq multiple of n) signed honestly but with a non-TID rev, a record under
 *     {@code app.bsky..post}, or a 533-character record key; each is listed in
 *     {@link jetstream.simulator.GroundTruth#injections()} and stays in the ground truth's records.
 * <li>{@code plcDown}, {@code plcSlowMillis}: the PLC directory answers 503, or that late.
 * <li>{@code rotateKeyOnIdentity}: each {@code #identity} event comes with a new signing key for
 *     its account; later commits are signed with it and the PLC serves it.
 * <li>{@code getRepoDown} (503), {@code getRepoNotFound} (404 RepoNotFound), {@code getRepoTrickle}
 *     (headers, then one byte a second), {@code getRepoHugeBytes=b} (200 with b garbage bytes and
 *     no Content-Length): every getRepo, on every host and the relay.
 * <li>{@code oversizeFrameEvery=n}: before each event whose seq is a multiple of n a 17 MiB message.
 * <li>{@code poisonFrameEvery=n}: before each event whose seq is a multiple of n a decodable
 *     {@code #commit} repeating the previous seq with an op action {@code frob}.
 * <li>{@code didWebEvery=n} (a network knob, not a fault): every n-th account is
 *     {@code did:web:u<i>.web.sim.test}; its document is served on 127.0.0.1 at
 *     {@code /did-web/<host>/.well-known/did.json} and the host listed in {@code /sim/hosts}, so an
 *     ingester with the dev host map resolves it here. {@code didWebWrongKey}: those documents name
 *     a key no account signs with (their commits fail verification as {@code bad_signature}).
 * <li>The knobs {@code plcDown}, {@code plcSlowMillis} and {@code getRepo*} may be changed while
 *     the simulator runs (a fault that starts and clears).
 * <li>{@code listHosts=false}: the relay answers listHosts 501 MethodNotImplemented.
 * </ul>
 *
 * <h2>World model</h2>
 * Everything derives from the seed: DIDs, keys (RFC 6979 signatures), host assignment (skewed),
 * record counts (exponential around {@code recordsMean}, plus {@code bigRepos} repos of
 * {@code bigRepoRecords}), record bodies (posts, likes, reposts, follows, blocks, profiles with
 * blobs, non-Bluesky lexicons), and the event stream (mix weights {@code mix*}). Live event
 * {@code n} is stamped {@code 2026-01-01T00:00:00Z + n ms}; its rev is the TID of that instant.
 * An account's initial repository is regenerated on demand and held in memory only after a live
 * event touches it, so the load profile's ten million records are never all in memory; live
 * writes go to {@code writers} accounts (load profile: 2 000), built ahead of their first event when a
 * live rate is set, so a long run's heap stays flat.
 * Base commits are signed RFC 6979; live commits by a fast signer with sequential nonces
 * (acceptable only because every simulated key is public, derived from the seed).
 *
 * <h2>Standalone</h2>
 * {@code java -jar simulator/target/simulator-<v>-all.jar --profile demo --port 7777}: see
 * {@link jetstream.simulator.Main} and {@link jetstream.simulator.SimConfig#knobs()}; every knob
 * is {@code --kebab-case} or {@code SIM_UPPER_SNAKE} ({@code --no-x} sets a boolean false; an
 * unknown flag or {@code SIM_*} variable fails). It prints the URLs it serves at start;
 * {@code --log-requests} logs every request.
 */
package jetstream.simulator;
