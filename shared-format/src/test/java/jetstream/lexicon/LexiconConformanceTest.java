package jetstream.lexicon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Our {@code lexicons/} must define exactly the XRPC contract of the reference lexicons: same ids,
 * parameters, types, outputs and errors. Only the wording of {@code description} strings may differ,
 * and it must: the descriptions are ours.
 */
@Tag("unit")
class LexiconConformanceTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void everyReferenceLexiconHasAStructurallyEqualCounterpart() throws IOException {
        Path reference = Vectors.repoRoot().resolveSibling("shared").resolve("reference/lexicons");
        Path ours = Vectors.repoRoot().resolve("lexicons");
        assertTrue(Files.isDirectory(reference), "reference lexicons missing at " + reference);

        List<Path> referenceFiles = jsonFiles(reference);
        assertTrue(referenceFiles.size() >= 9, "expected at least 9 reference lexicons, found " + referenceFiles);
        List<String> problems = new ArrayList<>();
        int descriptions = 0;
        for (Path refFile : referenceFiles) {
            Path relative = reference.relativize(refFile);
            Path ourFile = ours.resolve(relative.toString());
            if (!Files.isRegularFile(ourFile)) {
                problems.add(relative + ": no counterpart under lexicons/");
                continue;
            }
            JsonNode refTree = JSON.readTree(refFile.toFile());
            deployedSince(relative.toString(), refTree);
            JsonNode ourTree = JSON.readTree(ourFile.toFile());
            descriptions += compare(refTree, ourTree, relative + ":", problems);
            String id = relative.toString().replace(".json", "").replace('/', '.');
            if (!id.equals(ourTree.path("id").asText())) {
                problems.add(relative + ": id does not match the file's path");
            }
        }
        assertEquals(List.of(), problems);
        assertTrue(descriptions >= 100, "only " + descriptions + " descriptions compared");
    }

    @Test
    void everyLexiconOfOursIsAReferenceOne() throws IOException {
        Path reference = Vectors.repoRoot().resolveSibling("shared").resolve("reference/lexicons");
        Path ours = Vectors.repoRoot().resolve("lexicons");
        List<Path> ourFiles = jsonFiles(ours);
        assertTrue(ourFiles.size() >= 9, "expected at least 9 lexicons of ours, found " + ourFiles);
        for (Path file : ourFiles) {
            Path relative = ours.relativize(file);
            assertTrue(Files.isRegularFile(reference.resolve(relative.toString())),
                    relative + " has no reference lexicon to conform to");
        }
    }

    /**
     * What the reference as deployed added after our copy of its lexicons was taken (issue 24): the
     * subscribeEvents {@code #info} frame's {@code FutureCursor} name. Applied to the reference tree,
     * so everything else stays compared exactly.
     */
    private static void deployedSince(String relative, JsonNode refTree) {
        if (relative.equals("network/bsky/jetstream/subscribeEvents.json")) {
            JsonNode known = refTree.at("/defs/info/properties/name/knownValues");
            if (known instanceof ArrayNode a && !a.toString().contains("FutureCursor")) {
                a.add("FutureCursor");
            }
        }
    }

    /** Walks both trees; returns how many description strings were paired. */
    private static int compare(JsonNode ref, JsonNode ours, String path, List<String> problems) {
        if (ref.getNodeType() != ours.getNodeType()) {
            problems.add(path + " is " + ours.getNodeType() + ", reference has " + ref.getNodeType());
            return 0;
        }
        int descriptions = 0;
        if (ref instanceof ObjectNode refObject) {
            if (!fieldNames(refObject).equals(fieldNames((ObjectNode) ours))) {
                problems.add(path + " keys " + fieldNames((ObjectNode) ours) + ", reference has " + fieldNames(refObject));
                return 0;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = refObject.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                JsonNode ourValue = ours.get(field.getKey());
                String childPath = path + "/" + field.getKey();
                if (field.getKey().equals("description") && field.getValue().isTextual() && ourValue.isTextual()) {
                    descriptions++;
                    if (ourValue.asText().equals(field.getValue().asText())) {
                        problems.add(childPath + " copies the reference wording");
                    } else if (ourValue.asText().isBlank()) {
                        problems.add(childPath + " is blank");
                    }
                } else {
                    descriptions += compare(field.getValue(), ourValue, childPath, problems);
                }
            }
        } else if (ref instanceof ArrayNode refArray) {
            if (refArray.size() != ours.size()) {
                problems.add(path + " has " + ours.size() + " items, reference has " + refArray.size());
                return 0;
            }
            for (int i = 0; i < refArray.size(); i++) {
                descriptions += compare(refArray.get(i), ours.get(i), path + "[" + i + "]", problems);
            }
        } else if (!ref.equals(ours)) {
            problems.add(path + " is " + ours + ", reference has " + ref);
        }
        return descriptions;
    }

    private static List<String> fieldNames(ObjectNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        names.sort(null);
        return names;
    }

    private static List<Path> jsonFiles(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(p -> p.toString().endsWith(".json") && Files.isRegularFile(p)).sorted().toList();
        }
    }
}
