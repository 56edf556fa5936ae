package jetstream.atproto.syntax;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;
import jetstream.atproto.DecodeException;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Drives every file of the atproto interop syntax vectors through the matching validator. A file
 * whose kind has no validator here fails the test, so new upstream vector files cannot be skipped
 * silently. The sibling {@code lexicon/} vectors exercise lexicon schema and record-data validation,
 * which Jetstream does not perform (it archives records without schema checks), so they are not
 * driven here.
 */
@Tag("unit")
class SyntaxInteropVectorsTest {

    /** A validator under test: the boolean check, the throwing check and its drop reason. */
    private record Syntax(Predicate<CharSequence> isValid, Consumer<CharSequence> validate, String reason,
                          RangeCheck range) {}

    @FunctionalInterface
    private interface RangeCheck {
        boolean isValid(CharSequence s, int start, int end);
    }

    private static final Map<String, Syntax> BY_PREFIX = Map.ofEntries(
            Map.entry("atidentifier", new Syntax(AtIdentifier::isValid, AtIdentifier::validate,
                    "invalid_at_identifier", AtIdentifier::isValid)),
            Map.entry("aturi", new Syntax(AtUri::isValid, AtUri::validate, "invalid_at_uri", null)),
            Map.entry("cid", new Syntax(CidString::isValid, CidString::validate, "invalid_cid", null)),
            Map.entry("datetime", new Syntax(Datetime::isValid, Datetime::validate, "invalid_datetime", null)),
            Map.entry("did", new Syntax(Did::isValid, Did::validate, "invalid_did", Did::isValid)),
            Map.entry("handle", new Syntax(Handle::isValid, Handle::validate, "invalid_handle", Handle::isValid)),
            Map.entry("language", new Syntax(Language::isValid, Language::validate, "invalid_language", null)),
            Map.entry("nsid", new Syntax(Nsid::isValid, Nsid::validate, "invalid_nsid", Nsid::isValid)),
            Map.entry("recordkey", new Syntax(RecordKey::isValid, RecordKey::validate, "invalid_rkey",
                    RecordKey::isValid)),
            Map.entry("tid", new Syntax(Tid::isValid, Tid::validate, "invalid_tid", null)),
            Map.entry("uri", new Syntax(Uri::isValid, Uri::validate, "invalid_uri", null)));

    @Test
    void everySyntaxVectorFileIsAcceptedOrRejectedAsLabelled() throws IOException {
        Path dir = Vectors.resolve("atproto-interop/syntax");
        List<Path> files;
        try (Stream<Path> listing = Files.list(dir)) {
            files = listing.filter(Files::isRegularFile).sorted().toList();
        }
        assertTrue(files.size() >= 24, "expected the 24 interop syntax files, found " + files.size());

        Map<String, Integer> casesPerFile = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        for (Path file : files) {
            String name = file.getFileName().toString();
            boolean expectValid;
            if (name.endsWith("_valid.txt")) {
                expectValid = true;
            } else if (name.endsWith("_invalid.txt")) {
                expectValid = false;
            } else {
                fail("syntax vector file with no valid/invalid suffix: " + name);
                return;
            }
            Syntax syntax = BY_PREFIX.get(name.substring(0, name.indexOf('_')));
            if (syntax == null) {
                fail("no validator covers syntax vector file " + name);
            }
            int cases = 0;
            for (String line : Files.readAllLines(file)) {
                // Comments and blank lines only; whitespace inside a case is significant.
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                cases++;
                check(syntax, line, expectValid, name, failures);
            }
            casesPerFile.put(name, cases);
            if (cases == 0) {
                failures.add(name + ": no cases read");
            }
        }
        assertEquals(List.of(), failures, "cases per file: " + casesPerFile);
        int total = casesPerFile.values().stream().mapToInt(Integer::intValue).sum();
        assertTrue(total >= 400, "only " + total + " syntax cases ran: " + casesPerFile);
    }

    private static void check(Syntax syntax, String value, boolean expectValid, String file, List<String> failures) {
        String label = file + ": " + (value.length() > 60 ? value.substring(0, 60) + "..." : value);
        if (syntax.isValid.test(value) != expectValid) {
            failures.add(label + " isValid should be " + expectValid);
        }
        try {
            syntax.validate.accept(value);
            if (!expectValid) {
                failures.add(label + " validate accepted it");
            }
        } catch (DecodeException e) {
            if (expectValid) {
                failures.add(label + " validate rejected it: " + e.getMessage());
            } else if (!e.reason().equals(syntax.reason)) {
                failures.add(label + " reason " + e.reason() + ", expected " + syntax.reason);
            }
        }
        if (syntax.range != null) {
            // The same value embedded in a longer sequence: the range form must honour its bounds.
            String padded = "/" + value + "/";
            if (syntax.range.isValid(padded, 1, padded.length() - 1) != expectValid) {
                failures.add(label + " range form disagrees");
            }
        }
    }
}
