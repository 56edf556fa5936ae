/**
 * Repository sync: signed commits, whole-repository exports ({@code getRepo}) and the Sync 1.1 commit
 * verifier (signature plus MST inversion to {@code prevData}) with its snake_case failure reasons.
 * May depend on the other {@code jetstream.atproto} packages (not {@code firehose}).
 */
package jetstream.atproto.sync;
