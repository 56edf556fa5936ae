/**
 * The {@code jetstream} command line ({@link jetstream.cli.Main} registers every subcommand): network commands
 * over the client library, segment inspection and verification, and relay-frame conversion.
 * May depend on {@code jetstream.client} and shared-format.
 */
package jetstream.cli;
